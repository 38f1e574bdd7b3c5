/**
 * The benchmark's own arithmetic and inputs: a generated repository is valid and has the promised
 * shape, and the emulator-log analysis counts only requests sent inside a Retry-After window.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyLogFigures, insideRetryAfter, naiveRequests, requestBudget } from '../src/analysis.js';
import { judgeFigure, renderFigures } from '../src/figures.js';
import { generateRepository } from '../src/generate.js';
import { diffGroups, groupSnapshot } from '../src/heap-diff.js';
import type { RequestLogEntry } from '../../emulator/src/server.js';
import { validateManifests } from '../../../src/engine/reconcile.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const entry = (ts: number, status = 200, method = 'POST', durationMs = 1): RequestLogEntry => ({
  method,
  path: '/api/v1/open-api',
  query: '',
  status,
  durationMs,
  ts,
});

describe('generated repository', () => {
  it('validates offline and holds N entities, N/10 edges from N/50 callers and every other kind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-test-'));
    dirs.push(dir);
    const shape = await generateRepository(dir, { entities: 500 });
    const result = await validateManifests(dir, { signal: new AbortController().signal });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const count = (kind: string) => result.objects.filter((o) => o.kind === kind).length;
    expect(count('entity')).toBe(500);
    expect(count('dependency')).toBe(50);
    const callers = result.objects
      .filter((o) => o.kind === 'dependency')
      .map((o) => (o.spec as { callerTag: string }).callerTag);
    expect(new Set(callers).size).toBe(10);
    expect(shape.callers).toBe(10);
    expect(count('entity-type')).toBe(shape.entityTypes);
    expect(count('catalog-page')).toBe(shape.catalogPages);
    expect(count('initiative')).toBe(shape.initiatives);
    expect(count('scaffolder-template')).toBe(shape.scaffolderTemplates);
    expect(naiveRequests(shape)).toBe(500 + 3 + 3 + 3 + 3 + 10);
    expect(requestBudget(shape).total).toBe(1 + 6 + 10);
  });
});

describe('Retry-After windows in the emulator log', () => {
  it('counts a request that arrives after the 429 was answered and before Retry-After elapsed', () => {
    const log = [entry(1000, 429), entry(1030), entry(1500), entry(2100)];
    // 1030 is within the 50 ms allowance (already in flight); 1500 is inside; 2100 is after.
    expect(insideRetryAfter(log, 1000, 50)).toBe(1);
  });

  it('finds nothing without 429s, and rates writes over the write phase', () => {
    const log = [entry(0, 200, 'GET'), ...Array.from({ length: 101 }, (_, i) => entry(1000 + i * 10))];
    const figures = applyLogFigures(log, 6000);
    expect(figures.insideRetryAfter).toBe(0);
    expect(figures.writes).toBe(101);
    expect(figures.writesPerMinute).toBeCloseTo(6000, 5);
    expect(figures.failedResponses).toBe(0);
  });

  it("leaves the lease write before the plan's reads out of the write phase", () => {
    // A lease write at 0, its confirming read a second later, the plan's reads, then the changes.
    const log = [
      entry(0, 200, 'POST'),
      entry(1000, 200, 'GET'),
      entry(1500, 200, 'GET'),
      ...Array.from({ length: 101 }, (_, i) => entry(2000 + i * 10)),
    ];
    const figures = applyLogFigures(log, 6000);
    expect(figures.writes).toBe(101);
    expect(figures.writeSpanMs).toBe(1000);
    expect(figures.writesPerMinute).toBeCloseTo(6000, 5);
  });
});

describe('figures beside their floors', () => {
  it('judges a target in the unit, or as a multiple of the floor, and says how far above the floor', () => {
    const help = judgeFigure({
      id: 'cli-help',
      figure: '--help',
      value: 150,
      unit: 'ms',
      floor: { value: 50, what: '`node -e 0`' },
      target: { timesFloor: 4 },
    });
    expect(help).toMatchObject({ limit: 200, met: true, ofFloor: 3 });
    expect(judgeFigure({ ...help, value: 201 })).toMatchObject({ met: false });
    expect(judgeFigure({ id: 'v', figure: 'validate', value: 0.5, unit: 's', target: { atMost: 0.4 } })).toMatchObject({
      limit: 0.4,
      met: false,
    });
    // A figure without a target is shown, never judged.
    expect(judgeFigure({ id: 'x', figure: 'x', value: 3, unit: 'requests' }).met).toBeUndefined();
  });

  it('renders one row per figure with its floor, the ratio, the target and the verdict', () => {
    const table = renderFigures([
      {
        id: 'watch-change-requests',
        figure: 'requests of a one-file change',
        value: 83,
        unit: 'requests',
        floor: { value: 2, what: '1 read + 1 write' },
        target: { atMost: 5 },
      },
      {
        id: 'rss',
        figure: 'RSS ratio',
        value: 1.05,
        unit: '×',
        floor: { value: 1, what: 'no growth' },
        target: { atMost: 1.2 },
      },
    ]);
    const [, , first, second] = table.split('\n');
    expect(first).toBe(
      '| requests of a one-file change | 83 requests | 2 requests (1 read + 1 write) | 41.50× | ≤ 5 requests | **MISSED** |',
    );
    expect(second).toBe('| RSS ratio | 1.05× | 1.00× (no growth) | 1.05× | ≤ 1.20× | met |');
  });
});

describe('heap snapshot diff', () => {
  /** A snapshot in V8's format with nodes given as [type, name, self size]. */
  const snapshot = (nodes: [string, string, number][]) => {
    const types = ['hidden', 'array', 'string', 'object', 'code', 'closure'];
    const strings = [...new Set(nodes.map(([, name]) => name))];
    return {
      snapshot: { meta: { node_fields: ['type', 'name', 'id', 'self_size'], node_types: [types] as [string[]] } },
      nodes: nodes.flatMap(([type, name, size], id) => [types.indexOf(type), strings.indexOf(name), id, size]),
      strings,
    };
  };

  it('groups by constructor (strings and code by type) and lists the largest change first', () => {
    const before = groupSnapshot(
      snapshot([
        ['object', 'ManifestEntry', 100],
        ['string', 'a', 10],
      ]),
    );
    const after = groupSnapshot(
      snapshot([
        ['object', 'ManifestEntry', 100],
        ['object', 'ManifestEntry', 100],
        ['string', 'b', 30],
        ['code', 'f', 5],
      ]),
    );
    expect(after.get('object:ManifestEntry')).toEqual({ count: 2, bytes: 200 });
    expect(diffGroups(before, after).map((c) => c.key)).toEqual(['object:ManifestEntry', 'string', 'code']);
  });
});
