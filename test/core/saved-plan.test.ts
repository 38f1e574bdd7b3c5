/** `whatMoved` (issue 31): what differs between a saved plan and the plan made now, named once each, escaped. */
import { describe, expect, it } from 'vitest';
import { type SavedPlanBody, whatMoved } from '../../src/core/saved-plan.js';

const d = (c: string) => `sha256:${c.repeat(64)}`;
const saved: SavedPlanBody = {
  format: 'cortex-sync-plan',
  version: 1,
  cortexSync: 'test',
  createdAt: '2026-01-01T00:00:00.000Z',
  baseUrl: 'http://127.0.0.1:1',
  dir: '/repo',
  sourceId: 'acme',
  origin: 'github.com/acme/catalog',
  settings: {
    prune: false,
    pruneEntities: 'archive',
    allowMassDelete: false,
    allowTakeover: false,
    maxDeleteShare: 0.25,
    maxDeleteCount: null,
    protect: [],
    forceEntityTypeSchema: false,
    strict: false,
    allowEmpty: false,
  },
  manifests: {
    digest: d('a'),
    files: [
      { path: 'a.yaml', digest: d('1') },
      { path: 'b.yaml', digest: d('2') },
    ],
  },
  records: d('e'),
  reads: [{ key: 'entity/a', digest: d('3') }],
  steps: [{ key: 'entity/a', action: 'update', digest: d('4'), change: {} }],
  summary: { create: 0, update: 1, delete: 0, archive: 0, noop: 1 },
};

describe('whatMoved', () => {
  it('the same plan: nothing', () => {
    expect(whatMoved(saved, saved)).toEqual([]);
  });
  it('names a setting, each manifest file, the records and an object once (not its step again)', () => {
    const moved = whatMoved(saved, {
      ...saved,
      settings: { ...saved.settings, prune: true },
      manifests: {
        digest: d('b'),
        files: [
          { path: 'a.yaml', digest: d('9') },
          { path: 'c\u001b.yaml', digest: d('2') },
        ],
      },
      records: d('f'),
      reads: [{ key: 'entity/a', digest: d('5') }],
      steps: [{ key: 'entity/a', action: 'update', digest: d('6'), change: {} }],
    }).map((m) => m.message);
    expect(moved).toEqual([
      'setting prune was false when planned, is true now',
      'manifest a.yaml changed',
      'manifest b.yaml was removed',
      'manifest c\\x1b.yaml was added',
      'entity/a changed in the workspace since the plan',
      'the ownership records changed since the plan',
    ]);
  });
  it('a step no longer planned, one planned now', () => {
    const moved = whatMoved(saved, {
      reads: [],
      steps: [{ key: 'entity/b', action: 'archive', digest: d('7'), change: {} }],
    }).map((m) => m.message);
    expect(moved).toEqual(['update entity/a is no longer planned', 'archive entity/b is planned now']);
  });
});
