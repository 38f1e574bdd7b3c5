/**
 * How a plan reads scorecards: the list, then the descriptor of each one declared or managed here
 * (and only those), whatever form the descriptor answer takes; what cannot be read stops the plan.
 */
import { describe, expect, it } from 'vitest';
import { type ApiClient, type ApiRequest, type ApiResponse, emptyClientStats } from '../../../src/api/types.js';
import { ApiError } from '../../../src/core/errors.js';
import type { DesiredObject } from '../../../src/core/model.js';
import { readDescriptor } from '../../../src/kinds/scorecard/api.js';
import { scorecardKind as kind } from '../../../src/kinds/scorecard/index.js';
import type { ScorecardManifest } from '../../../src/kinds/scorecard/schema.js';
import type { FetchContext } from '../../../src/kinds/types.js';

/** A client whose list answers `listed` and whose descriptor reads answer `descriptors[tag]` (404 when absent). */
const fakeClient = (
  listed: unknown[] | number,
  descriptors: Record<string, unknown>,
): ApiClient & { reads: string[] } => {
  const reads: string[] = [];
  return {
    reads,
    close: async () => {},
    stats: emptyClientStats,
    paginate: async <T>(req: ApiRequest): Promise<T[]> => {
      if (typeof listed === 'number') {
        throw new ApiError('API', {
          operation: req.operation,
          method: 'GET',
          path: req.path,
          status: listed,
          attempts: 1,
          durationMs: 1,
        });
      }
      expect(req.query).toMatchObject({ showDrafts: true });
      return listed as T[];
    },
    request: async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
      const tag = decodeURIComponent(/^\/api\/v1\/scorecards\/([^/]+)\/descriptor$/.exec(req.path)?.[1] ?? '');
      reads.push(tag);
      const body = descriptors[tag];
      return { status: body === undefined ? 404 : 200, headers: {}, body: body as T, attempts: 1, durationMs: 1 };
    },
  };
};

const desired = (tag: string): DesiredObject<ScorecardManifest> =>
  ({ kind: 'scorecard', id: tag, spec: { tag, name: tag, rules: [] } }) as unknown as DesiredObject<ScorecardManifest>;

const ctx = (client: ApiClient, extra: Partial<FetchContext<ScorecardManifest>> = {}) => ({
  client,
  desired: [],
  managedIds: [],
  readBefore: [],
  ...extra,
});

describe('reading scorecards', () => {
  it('reads the descriptors of the scorecards declared or managed here only, one the list misses included', async () => {
    const client = fakeClient([{ tag: 'ours' }, { tag: 'theirs', name: 'Theirs', isDraft: true }], {
      ours: 'tag: ours\nname: Ours\nrules: []\n',
      managed: 'tag: managed\nname: Managed\n',
      theirs: 'tag: theirs\nname: Theirs\n',
    });
    const live = await kind.live.fetch(
      ctx(client, { desired: [desired('ours'), desired('gone')], managedIds: ['managed'] }),
    );
    expect(client.reads.sort()).toEqual(['gone', 'managed', 'ours']);
    expect(live.map((o) => [o.id, (o.state as { listedOnly?: boolean }).listedOnly ?? false]).sort()).toEqual([
      ['managed', false],
      ['ours', false],
      ['theirs', true],
    ]);
  });

  it('reads a descriptor answered as YAML text, as a JSON string holding it, or as an object', async () => {
    const yaml = 'tag: t\nname: T\nladder:\n  levels:\n    - {name: Gold, rank: 1}\n';
    for (const body of [
      yaml,
      JSON.parse(JSON.stringify(yaml)) as string,
      { tag: 't', name: 'T', ladder: { levels: [{ name: 'Gold', rank: 1 }] } },
    ]) {
      const state = await readDescriptor(fakeClient([], { t: body }), 't');
      expect(state?.ladder?.levels).toEqual([{ name: 'Gold', rank: 1 }]);
    }
    expect(await readDescriptor(fakeClient([], {}), 't')).toBeUndefined();
  });

  it('stops the plan on an answer it cannot read, rather than taking the scorecard for absent', async () => {
    await expect(readDescriptor(fakeClient([], { t: 'tag: [unclosed' }), 't')).rejects.toThrow(
      /read scorecard t: the descriptor answered is not YAML/,
    );
    await expect(readDescriptor(fakeClient([], { t: 'name: no tag\n' }), 't')).rejects.toThrow(
      /read scorecard t: the descriptor answered cannot be read \(tag: /,
    );
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 120 }, (_, i) => `k${i}: *a`).join('\n')}\ntag: t\n`;
    await expect(readDescriptor(fakeClient([], { t: bomb }), 't')).rejects.toThrow(/not YAML/);
    await expect(kind.live.fetch(ctx(fakeClient([{ tag: 'a' }, { name: 'no tag' }], {})))).rejects.toThrow(
      /list scorecards: item 1 of the list is not a scorecard \(tag: /,
    );
    await expect(kind.live.fetch(ctx(fakeClient([{ tag: '' }], {})))).rejects.toThrow(/item 0 .*\(tag: /);
  });

  it('reads a listed name or draft flag of another type as absent, not as a failure', async () => {
    const live = await kind.live.fetch(ctx(fakeClient([{ tag: 'odd', name: 5, isDraft: 'yes' }], {})));
    expect(live.map((l) => l.state)).toEqual([{ tag: 'odd', name: null, draft: null, listedOnly: true }]);
  });

  it('a list this key may not read is a warning with nothing of it here, and a failure otherwise', async () => {
    const warnings: unknown[] = [];
    const none = await kind.live.fetch(ctx(fakeClient(403, {}), { unreadable: (w) => warnings.push(w) }));
    expect(none).toEqual([]);
    expect(warnings).toEqual([expect.objectContaining({ code: 'scorecards-unreadable', severity: 'warning' })]);
    await expect(kind.live.fetch(ctx(fakeClient(404, {}), { managedIds: ['ours'] }))).rejects.toThrow(/HTTP 404/);
    await expect(kind.live.fetch(ctx(fakeClient(500, {})))).rejects.toThrow(/HTTP 500/);
  });

  it('reads by identity the descriptors of those tags alone, as the plan reads them, without the list', async () => {
    const descriptors = { ours: 'tag: ours\nname: Ours\nrules: []\n', theirs: 'tag: theirs\nname: Theirs\n' };
    // A list that would fail: a read by identity never asks for it.
    const client = fakeClient(500, descriptors);
    const read = await kind.live.fetchByIds?.(['ours', 'gone', 'ours'], ctx(client, { desired: [desired('ours')] }));
    expect(client.reads.sort()).toEqual(['gone', 'ours']);
    const planned = await kind.live.fetch(
      ctx(fakeClient([{ tag: 'theirs' }], descriptors), { desired: [desired('ours')] }),
    );
    expect(read).toEqual(planned.filter((o) => o.id === 'ours'));
  });
});
