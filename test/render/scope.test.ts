/**
 * The plan's header names every setting that widens what the plan may remove, and where it came
 * from, in every output a reviewer reads: text, Markdown, JSON (`deleteScope`) and the Action's
 * pull-request comment. Nothing is shown when nothing is widened.
 */
import { describe, expect, it } from 'vitest';
import { renderPlanComment } from '../../src/action/comment.js';
import type { Plan } from '../../src/core/model.js';
import { sourceBinding } from '../../src/core/source-binding.js';
import type { ConfigOrigins } from '../../src/engine/config.js';
import { deleteScopeOf } from '../../src/engine/delete-scope.js';
import { planJsonObject } from '../../src/render/json.js';
import { renderPlanMarkdown } from '../../src/render/markdown.js';
import { renderPlanText } from '../../src/render/text.js';

const EMPTY: Plan = { changes: [], diagnostics: [], summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 3 } };

const defaults = {
  sourceId: 'repo-b',
  prune: false,
  pruneEntities: 'archive' as const,
  maxDeleteShare: 0.25,
  protect: [] as string[],
  allowMassDelete: false,
  allowTakeover: false,
};

const binding = sourceBinding({
  sourceId: 'repo-b',
  origin: 'github.com/acme/repo-a',
  record: { exists: true, origin: 'github.com/acme/repo-b' },
  allowTakeover: false,
});

const hostile = (): Plan => ({
  ...EMPTY,
  scope: deleteScopeOf(
    {
      ...defaults,
      prune: true,
      pruneEntities: 'delete',
      maxDeleteShare: 1,
      allowMassDelete: true,
      flagsAre: 'input',
      origins: {
        prune: { origin: 'file', name: 'cortex-sync.yaml:2' },
        pruneEntities: { origin: 'environment', name: 'CORTEX_SYNC_PRUNE_ENTITIES' },
        maxDeleteShare: { origin: 'flag', name: '--max-delete-share' },
        allowMassDelete: { origin: 'flag', name: '--allow-mass-delete' },
      } as ConfigOrigins,
    },
    { protect: ['entity/payments-*', 'initiative/Two\nlines'], maxDeleteCount: 5 },
    binding,
  ),
});

describe('the delete-scope header', () => {
  it('names each widening setting with its source in the text plan, even when nothing changes', () => {
    const text = renderPlanText(hostile(), { color: false });
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      'Settings that widen what this plan of source `repo-b` (origin `github.com/acme/repo-a`) may remove:',
    );
    expect(text).toContain(
      '  ! prune: true (cortex-sync.yaml:2): objects of this source whose manifests are gone are removed',
    );
    expect(text).toContain(
      '  ! pruneEntities: delete (CORTEX_SYNC_PRUNE_ENTITIES): pruned entities are deleted, not archived',
    );
    expect(text).toContain(
      '  ! maxDeleteShare: 1 (Action input): one apply may remove up to 100 % of the managed objects',
    );
    expect(text).toContain(
      '  ! maxDeleteCount: null (cortex-sync.yaml): no count limit any more (the ownership record has 5)',
    );
    expect(text).toContain('  ! allowMassDelete: true (Action input)');
    // A removed pattern holding a newline is printed escaped: it cannot start a line of its own.
    expect(text).toContain('  ! protect: ["entity/payments-*","initiative/Two\\\\nlines"] (cortex-sync.yaml)');
    expect(text).toContain('No changes. The workspace matches the manifests.');
  });

  it('Markdown and the Action comment put it first, as a warning block; JSON carries it as deleteScope', () => {
    const markdown = renderPlanMarkdown(hostile());
    expect(markdown).toMatch(
      /^### cortex-sync plan\n\n> \[!WARNING\]\n> \*\*Settings that widen what this plan may remove\*\* of source `repo-b` \(origin `github\.com\/acme\/repo-a`\):\n> - `prune`: `true` from `cortex-sync\.yaml:2`/,
    );
    const comment = renderPlanComment(hostile(), [], { title: 'cortex-sync plan', limit: 60_000 });
    expect(comment).toMatch(/^### cortex-sync plan\n\n> \[!WARNING\]\n> \*\*Settings that widen/);
    expect(comment.indexOf('`pruneEntities`: `delete` from `CORTEX_SYNC_PRUNE_ENTITIES`')).toBeLessThan(
      comment.indexOf('| create'),
    );

    const json = planJsonObject(hostile());
    expect(json.deleteScope).toMatchObject({
      sourceId: 'repo-b',
      origin: 'github.com/acme/repo-a',
      binding: 'claimed',
      recordedOrigin: 'github.com/acme/repo-b',
    });
    expect(json.deleteScope?.widened.map((w) => [w.setting, w.from])).toEqual([
      // The table's order: the engine's settings, then the kinds'.
      ['prune', 'file'],
      ['maxDeleteShare', 'input'],
      ['maxDeleteCount', 'file'],
      ['protect', 'file'],
      ['allowMassDelete', 'input'],
      ['pruneEntities', 'environment'],
    ]);
  });

  it('a record edited to hold 10,000 protect patterns makes a header of 20 of them, with the count', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => `entity/forged-${i}`);
    const plan: Plan = { ...EMPTY, scope: deleteScopeOf(defaults, { protect: many }, undefined) };
    const protect = plan.scope?.widened.find((w) => w.setting === 'protect');
    expect(protect?.value).toHaveLength(20);
    expect(protect?.effect).toContain('10000 patterns');
    expect(renderPlanText(plan, { color: false }).length).toBeLessThan(2_000);
  });

  it('in the Action comment, a source id or pattern cannot form a marker, an HTML comment or a mention', () => {
    const plan: Plan = {
      ...EMPTY,
      scope: deleteScopeOf(
        { ...defaults, sourceId: '<!-- cortex-sync:digest D2 --> @acme/admins', prune: true },
        { protect: ['entity/<!-- cortex-sync:changes -->'] },
        undefined,
      ),
    };
    const comment = renderPlanComment(plan, [], { title: 't', limit: 60_000 });
    expect(comment).not.toContain('<!--');
    // Outside code spans (where GitHub neither mentions nor links) there is no mention left.
    expect(comment.replace(/`[^`\n]*`/g, '')).not.toContain('@acme');
    expect(comment).toContain('@acme/admins');
  });

  it('shows nothing for the defaults, or for settings that only narrow removals', () => {
    const plan: Plan = {
      ...EMPTY,
      scope: deleteScopeOf(
        { ...defaults, maxDeleteShare: 0.1, maxDeleteCount: 3, protect: ['entity/*'] },
        { protect: ['entity/*'], maxDeleteCount: 10 },
        undefined,
      ),
    };
    expect(plan.scope?.widened).toEqual([]);
    expect(renderPlanText(plan, { color: false })).not.toContain('widen');
    expect(renderPlanMarkdown(plan)).not.toContain('WARNING');
    expect(renderPlanComment(plan, [], { title: 't', limit: 60_000 })).not.toContain('WARNING');
  });
});
