import { describe, expect, it } from 'vitest';
import type { ApplyReport, Change, Plan } from '../../src/core/model.js';
import { buildPlan } from '../../src/core/plan.js';
import { renderApplyReport } from '../../src/render/apply.js';
import { renderDiagnostics } from '../../src/render/diagnostics.js';
import { renderPlanJson } from '../../src/render/json.js';
import { renderPlanMarkdown } from '../../src/render/markdown.js';
import { renderPlanText } from '../../src/render/text.js';
import { allHandlers, desired, live, ref } from '../core/fakes.js';

const ESC = '\u001b[';
const SOURCE = 'platform-repo';

/** A realistic plan built by the planner: one update (the interface example), a create waiting for an entity type, noops, an archive. */
function samplePlan(): Plan {
  const noops = Array.from({ length: 3 }, (_, i) => desired('catalog-page', `page-${i}`, { state: { n: i } }));
  return buildPlan({
    desired: [
      desired(
        'entity',
        'payments-api',
        { state: { info: { 'x-cortex-groups': ['tier-0'], title: 'Payments | API' } } },
        { file: '.cortex/catalog/payments.yaml', line: 1 },
      ),
      desired('entity', 'orders-db', {
        state: { info: { title: 'Orders `db`' } },
        refs: [ref('entity-type', 'database', 'type')],
      }),
      desired('entity-type', 'database', { state: { name: 'Database' } }),
      ...noops,
    ],
    live: [
      live(
        'entity',
        'payments-api',
        { info: { title: 'Payments | API', 'x-cortex-groups': ['tier-1'] } },
        { owner: SOURCE, serverId: 'en123' },
      ),
      ...Array.from({ length: 3 }, (_, i) => live('catalog-page', `page-${i}`, { n: i }, { owner: SOURCE })),
      live('entity', 'legacy', { secret: 'live-only-state' }, { owner: SOURCE }),
    ],
    handlers: allHandlers('archive'),
    options: {
      sourceId: SOURCE,
      prune: true,
      allowTakeover: false,
      allowMassDelete: false,
      protect: [],
      manifestsComplete: true,
    },
  });
}

describe('renderPlanJson', () => {
  it('has the interface shape: formatVersion 1, summary counts, changes with kind/id/action/source/diff', () => {
    const doc = JSON.parse(renderPlanJson(samplePlan()));
    expect(doc.formatVersion).toBe(1);
    expect(doc.summary).toEqual({ create: 2, update: 1, delete: 0, archive: 1, noop: 3 });
    const update = doc.changes.find((c: { id: string }) => c.id === 'payments-api');
    expect(update).toEqual({
      kind: 'entity',
      id: 'payments-api',
      action: 'update',
      source: '.cortex/catalog/payments.yaml',
      line: 1,
      waitsFor: [],
      diff: [{ path: 'info.x-cortex-groups', before: ['tier-1'], after: ['tier-0'] }],
    });
    const create = doc.changes.find((c: { id: string }) => c.id === 'orders-db');
    expect(create.waitsFor).toEqual(['entity-type/database']);
    for (const c of doc.changes) {
      expect(['create', 'update', 'delete', 'archive', 'noop']).toContain(c.action);
      expect(Object.keys(c).slice(0, 3)).toEqual(['kind', 'id', 'action']);
      expect(Array.isArray(c.diff)).toBe(true);
    }
  });

  it('never carries the desired or live objects', () => {
    const text = renderPlanJson(samplePlan());
    expect(text).not.toContain('"desired"');
    expect(text).not.toContain('"live"');
    expect(text).not.toContain('live-only-state');
    expect(text).not.toContain('en123');
  });
});

describe('renderPlanText', () => {
  it('shows Terraform-like lines, field changes, reasons, ordering and the summary; hides noops', () => {
    const text = renderPlanText(samplePlan(), { color: false });
    expect(text).toContain('  ~ update entity/payments-api  (.cortex/catalog/payments.yaml:1)');
    expect(text).toContain('      ~ info.x-cortex-groups: ["tier-1"] → ["tier-0"]');
    expect(text).toContain('  + create entity-type/database');
    expect(text).toContain('      + name = "Database"');
    expect(text).toContain('      after entity-type/database');
    expect(text).toContain('  ! archive entity/legacy');
    expect(text).toContain('      manifest removed; managed by source `platform-repo`');
    expect(text).toContain('Plan: 2 to create, 1 to update, 0 to delete, 1 to archive, 3 unchanged.');
    expect(text).not.toContain('page-0');
    expect(renderPlanText(samplePlan(), { color: false, showNoop: true })).toContain('noop catalog-page/page-0');
  });

  it('says so when nothing changes', () => {
    const plan: Plan = {
      changes: [],
      diagnostics: [],
      summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 0 },
    };
    expect(renderPlanText(plan, { color: false })).toBe('No changes. The workspace matches the manifests.\n');
  });

  it('a refused plan with nothing to change says only the refusal, never "No changes" too', () => {
    const plan: Plan = {
      changes: [],
      diagnostics: [{ severity: 'error', code: 'source-claimed', message: 'claimed' }],
      summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 0 },
    };
    const text = renderPlanText(plan, { color: false });
    expect(text).toBe('Plan refused: 1 error in this plan; apply would write nothing.\n');
    expect(renderPlanMarkdown(plan)).not.toContain('No changes');
  });

  it('an ownership record of many objects: how many are not listed, and where every one is', () => {
    const keys = Array.from({ length: 25 }, (_, i) => `entity/svc-${i}` as const);
    const plan: Plan = {
      changes: [],
      diagnostics: [],
      summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 0 },
      inventory: [
        { phase: 'after', id: 'cortex-sync-inventory', action: 'create', add: keys, remove: [], reason: 'records' },
      ],
    };
    const text = renderPlanText(plan, { color: false });
    expect(text).toContain('entity/svc-19');
    expect(text).not.toContain('entity/svc-20');
    expect(text).toContain('5 more not listed here; the JSON plan (--output json) lists all 25');
    const json = renderPlanJson(plan);
    for (const key of keys) expect(json).toContain(key);
  });

  it('emits escape codes only when colour is asked for', () => {
    expect(renderPlanText(samplePlan(), { color: false })).not.toContain(ESC);
    expect(renderPlanText(samplePlan(), { color: true })).toContain(ESC);
    const diags = [{ severity: 'error' as const, code: 'schema', message: 'bad', file: 'a.yaml', line: 1, column: 2 }];
    expect(renderDiagnostics(diags, { color: false })).not.toContain(ESC);
    expect(renderDiagnostics(diags, { color: true })).toContain(ESC);
  });
});

describe('renderPlanMarkdown', () => {
  it('has a summary table and one collapsible section per kind, with pipes and backticks escaped', () => {
    const md = renderPlanMarkdown(samplePlan());
    expect(md).toContain('| | create | update | delete | archive | unchanged |');
    expect(md).toContain('| **all** | 2 | 1 | 0 | 1 | 3 |');
    expect(md.match(/<details>/g)).toHaveLength(2);
    expect(md).toContain('<summary><b>entity</b>: 3 changes</summary>');
    expect(md).toContain('| `info.x-cortex-groups` | `["tier-1"]` | `["tier-0"]` |');
    // A backtick inside a value gets a longer fence; a pipe is escaped so the table holds.
    expect(md).toContain('``"Orders `db`"``');
    expect(md).not.toContain('page-0');
  });

  it('stays under the size limit with a note when the plan is huge', () => {
    const changes: Change[] = Array.from({ length: 2000 }, (_, i) => ({
      kind: 'entity',
      id: `service-${i}`,
      action: 'create',
      source: `svc-${i}/cortex.yaml`,
      diff: [{ path: 'info.description', after: 'x'.repeat(100) }],
      waitsFor: [],
    }));
    const plan: Plan = {
      changes,
      diagnostics: [],
      summary: { create: 2000, update: 0, delete: 0, archive: 0, noop: 0 },
    };
    const md = renderPlanMarkdown(plan);
    expect(md.length).toBeLessThanOrEqual(65_000);
    expect(md).toMatch(
      /This plan is too long to show whole here: the field diffs of \d+ (?:creates|updates) not shown/,
    );
    expect(md.match(/<details>/g)?.length).toBe(md.match(/<\/details>/g)?.length);
  });
});

describe('renderDiagnostics', () => {
  it('prints file:line:col: severity: message [code], sorted by file then line', () => {
    const text = renderDiagnostics(
      [
        { severity: 'error', code: 'schema', message: 'second', file: 'b.yaml', line: 2, column: 1 },
        { severity: 'warning', code: 'style', message: 'late', file: 'a.yaml', line: 9, column: 4 },
        { severity: 'error', code: 'prune-empty', message: 'global' },
        { severity: 'error', code: 'unknown-reference', message: 'early', file: 'a.yaml', line: 3, column: 7 },
      ],
      { color: false },
    );
    expect(text).toBe(
      [
        'a.yaml:3:7: error: early [unknown-reference]',
        'a.yaml:9:4: warning: late [style]',
        'b.yaml:2:1: error: second [schema]',
        'error: global [prune-empty]',
        '',
      ].join('\n'),
    );
  });
});

describe('renderApplyReport', () => {
  it('counts outcomes and explains every failure and skip', () => {
    const change = (id: string, action: Change['action']): Change => ({
      kind: 'entity',
      id,
      action,
      diff: [],
      waitsFor: [],
    });
    const report: ApplyReport = {
      results: [
        { change: change('a', 'create'), outcome: 'ok' },
        {
          change: change('team', 'create'),
          outcome: 'failed',
          error: 'upsert entity team failed: POST /api/v1/open-api → HTTP 400: invalid owner',
          diagnostics: [
            { severity: 'error', code: 'api-violation', message: 'owner missing', file: 't.yaml', line: 4, column: 3 },
          ],
        },
        { change: change('svc', 'create'), outcome: 'skipped', blockedBy: 'entity/team' },
        { change: change('same', 'noop'), outcome: 'ok' },
      ],
      writeRequests: 3,
      durationMs: 1500,
      planLogFile: 'plan-log.jsonl',
    };
    const text = renderApplyReport(report, { color: false });
    expect(text).toContain('1 ok, 1 failed, 1 skipped (3 write requests in 1.5 s)');
    expect(text).toContain(
      '✗ create entity/team: upsert entity team failed: POST /api/v1/open-api → HTTP 400: invalid owner',
    );
    expect(text).toContain('t.yaml:4:3: error: owner missing [api-violation]');
    expect(text).toContain('- create entity/svc: skipped: waits for entity/team, which failed');
    expect(text).toContain('Plan log: plan-log.jsonl');
    expect(text).not.toContain(ESC);
  });

  it('with the run outcome line: that one summary, then what was sent (one request: singular)', () => {
    const report: ApplyReport = {
      results: [{ change: { kind: 'entity', id: 'a', action: 'create', diff: [], waitsFor: [] }, outcome: 'ok' }],
      writeRequests: 1,
      durationMs: 200,
    };
    const text = renderApplyReport(report, {
      color: false,
      summaryLine: 'Apply complete: 1 created, 0 updated, 0 deleted, 0 archived, 0 unchanged.',
    });
    expect(text).toBe(
      'Apply complete: 1 created, 0 updated, 0 deleted, 0 archived, 0 unchanged.\nSent 1 write request in 0.2 s.\n',
    );
  });

  it('an interrupted apply: per kind what was done and not, failures named, the plan log for the rest', () => {
    const change = (kind: Change['kind'], id: string): Change => ({
      kind,
      id,
      action: 'create',
      diff: [],
      waitsFor: [],
    });
    const results: ApplyReport['results'] = [];
    for (let i = 0; i < 400; i++) results.push({ change: change('entity', `done-${i}`), outcome: 'ok' });
    results.push({ change: change('entity', 'broken'), outcome: 'failed', error: 'HTTP 400: invalid' });
    for (let i = 0; i < 1100; i++)
      results.push({ change: change('entity', `later-${i}`), outcome: 'skipped', error: 'interrupted' });
    for (let i = 0; i < 150; i++)
      results.push({ change: change('dependency', `a→b${i}`), outcome: 'skipped', error: 'interrupted' });
    const text = renderApplyReport(
      { results, writeRequests: 401, durationMs: 36_000, interrupted: true, planLogFile: 'plan-log.jsonl' },
      { color: false, summaryLine: 'Apply interrupted: 400 created, …' },
    );
    expect(text.split('\n')).toEqual([
      'Apply interrupted: 400 created, …',
      'Sent 401 write requests in 36.0 s.',
      '  entity: 400 created; 1 failed; 1100 not done',
      '  dependency: none done; 150 not done',
      '  ✗ create entity/broken: HTTP 400: invalid',
      'Every change, done or not, is in the plan log: plan-log.jsonl',
      '',
    ]);
  });

  it('lists at most 20 changes skipped because of a failure, and counts the rest', () => {
    const change = (id: string): Change => ({ kind: 'entity', id, action: 'create', diff: [], waitsFor: [] });
    const results: ApplyReport['results'] = [{ change: change('type'), outcome: 'failed', error: 'refused' }];
    for (let i = 0; i < 25; i++)
      results.push({ change: change(`e${i}`), outcome: 'skipped', blockedBy: 'entity/type' });
    const text = renderApplyReport({ results, writeRequests: 1, durationMs: 0 }, { color: false });
    expect(text.match(/skipped: waits for/g)?.length).toBe(20);
    expect(text).toContain('… and 5 other skipped changes (the plan log names each)');
  });
});
