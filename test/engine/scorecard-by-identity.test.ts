/**
 * Scorecards read by identity (`fetchByIds`: one descriptor GET per tag, the list left unread):
 * under the apply lease, the scorecard an apply writes is re-checked by its descriptor; a run on
 * the kept live state (`LiveCache`, the watcher's) reads a changed scorecard alone. What only the
 * list tells (whether this key may list scorecards) keeps the full read, as does a tag the client
 * refuses to put in a path, and a kind without a read by identity.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { DotSegmentPathError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/api/types.js';
import type { SyncConfig } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { LiveCache } from '../../src/engine/live-cache.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { readByKeys, unreadableById } from '../../src/engine/recheck.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { KIND_HANDLERS, kindsFor } from '../../src/kinds/registry.js';
import type { AnyKindHandler } from '../../src/kinds/types.js';
import { emptyOwnershipIndex } from '../../src/ownership/index-records.js';
import { removeDir, syncConfig, tempDir, writeFiles } from './helpers.js';

const API_KEY = 'qzxv-wkpt-0123456789-test';

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
let config: SyncConfig;
let cache: LiveCache;
let n = 0;
let tag: string;

const scorecard = (name: string, at = tag): string =>
  `tag: ${at}\nname: ${name}\nladder:\n  levels:\n    - { name: Gold, rank: 1 }\nrules:\n  - expression: git != null\n    level: Gold\n`;
const descriptorPath = (at: string) => `/api/v1/scorecards/${at}/descriptor`;

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
});
afterAll(async () => {
  await client.close();
  await emulator.stop();
});
beforeEach(async () => {
  n += 1;
  tag = `by-id-${n}`;
  dir = await tempDir();
  config = syncConfig({ dir, sourceId: `github.com/acme/scorecard-by-id-${n}`, baseUrl: emulator.url, prune: false });
  cache = new LiveCache({ maxAgeMs: 3_600_000, maxObjects: 10 });
  await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('First') });
});
afterEach(async () => {
  emulator.setFaults({});
  await removeDir(dir);
});

/** An apply (with the kept live state unless `cached` is false) and the requests it sent. */
const apply = async (options: { cached?: boolean; handlers?: readonly AnyKindHandler[] } = {}) => {
  const from = emulator.requests.length;
  const result = await reconcile(
    {
      config,
      mode: 'apply',
      ...(options.cached === false ? {} : { session: { liveCache: cache } }),
      ...(options.handlers ? { handlers: options.handlers } : {}),
    },
    createEngineContext(client),
  );
  return { result, sent: emulator.requests.slice(from) };
};

const gets = (sent: readonly { method: string; path: string }[], path: string) =>
  sent.filter((r) => r.method === 'GET' && r.path === path).length;
const nameOf = (at: string) => emulator.state.scorecards.items.find((s) => s.tag === at)?.name;

describe('scorecards read by identity', () => {
  it('an apply that changes one scorecard re-checks it by its descriptor under the lease (the list is read once)', async () => {
    expect((await apply({ cached: false })).result.run.outcome).toBe('applied');
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Second') });
    const { result, sent } = await apply({ cached: false });
    expect(result.run).toMatchObject({ outcome: 'applied', read: { path: 'full', underLease: 'recheck' } });
    // The plan's read: the list and the descriptor; under the lease: the descriptor again.
    expect(gets(sent, '/api/v1/scorecards')).toBe(1);
    expect(gets(sent, descriptorPath(tag))).toBe(2);
    expect(nameOf(tag)).toBe('Second');
  });

  it('a run on the kept state reads a changed scorecard alone', async () => {
    expect((await apply()).result.run.read).toMatchObject({ path: 'full', reason: 'no-cache' });
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Second') });
    const { result, sent } = await apply();
    expect(result.run).toMatchObject({
      outcome: 'applied',
      read: { path: 'incremental', objects: 1, underLease: 'recheck' },
    });
    // Its descriptor, read for the plan and again under the lease (taken for this apply); no list.
    expect(gets(sent, '/api/v1/scorecards')).toBe(0);
    expect(gets(sent, descriptorPath(tag))).toBe(2);
    expect(nameOf(tag)).toBe('Second');
  });

  it('a new scorecard whose tag 404s is left out of the read (created), with no full read', async () => {
    expect((await apply()).result.run.outcome).toBe('applied');
    const added = `${tag}-added`;
    await writeFiles(dir, { [`.cortex/scorecards/${added}.yaml`]: scorecard('Added', added) });
    const { result, sent } = await apply();
    expect(result.run).toMatchObject({ outcome: 'applied', read: { path: 'incremental', objects: 1 } });
    expect(
      result.status === 'applied' && result.report.results.map((r) => `${r.change.action} ${r.change.id}`),
    ).toEqual([`create ${added}`]);
    // A 404 for the plan, and again under the lease (a create is re-checked too).
    expect(gets(sent, descriptorPath(added))).toBe(2);
    expect(gets(sent, '/api/v1/scorecards')).toBe(0);
    expect(nameOf(added)).toBe('Added');
  });

  it('a managed scorecard deleted in the UI (404 where one was kept): the run reads everything and puts it back', async () => {
    expect((await apply()).result.run.outcome).toBe('applied');
    emulator.state.scorecards.items = emulator.state.scorecards.items.filter((s) => s.tag !== tag);
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Second') });
    const { result } = await apply();
    expect(result.run).toMatchObject({ outcome: 'applied', read: { path: 'full', reason: 'gone-live' } });
    expect(nameOf(tag)).toBe('Second');
  });

  it('a server error on the descriptor fails the run naming the operation and the status, never the key', async () => {
    expect((await apply()).result.run.outcome).toBe('applied');
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Second') });
    emulator.setFaults({ reject: [{ method: 'GET', path: descriptorPath(tag), status: 500, message: 'boom' }] });
    const from = emulator.requests.length;
    const error = await apply().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`read scorecard ${tag} failed: GET ${descriptorPath(tag)} → HTTP 500`);
    expect(message).not.toContain(API_KEY);
    // Failed on the read by identity: the list was never asked for.
    expect(gets(emulator.requests.slice(from), '/api/v1/scorecards')).toBe(0);
    expect(nameOf(tag)).toBe('First');
  });

  it('a tag the client refuses to put in a path is not read by identity: the caller reads in full', async () => {
    const from = emulator.requests.length;
    const read = readByKeys({
      client,
      targets: [{ kind: 'scorecard', id: '..' }],
      lookup: (kind) => KIND_HANDLERS.find((h) => h.kind === kind) as AnyKindHandler,
      handlers: KIND_HANDLERS,
      desired: [],
      readBefore: [],
      index: emptyOwnershipIndex(),
    });
    await expect(read).rejects.toBeInstanceOf(DotSegmentPathError);
    expect(await read.catch(unreadableById)).toBeUndefined();
    expect(emulator.requests.length).toBe(from);
  });

  it('after a full read that could not list scorecards, a changed scorecard reads everything (the list judges it)', async () => {
    await rm(join(dir, '.cortex', 'scorecards', `${tag}.yaml`));
    await writeFiles(dir, {
      '.cortex/catalog-pages/page.yaml': `slug: page-${n}\nname: Page\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`,
    });
    emulator.setFaults({ reject: [{ method: 'GET', path: '/api/v1/scorecards', status: 403, message: 'forbidden' }] });
    const first = await apply();
    expect(first.result.run.outcome).toBe('applied');
    expect(first.result.diagnostics.map((d) => d.code)).toContain('scorecards-unreadable');
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('First') });
    // A full read fails the plan (a scorecard is declared but the list refused); so must this run.
    await expect(apply()).rejects.toThrow(/list scorecards failed: GET \/api\/v1\/scorecards\S* → HTTP 403/);
    expect(nameOf(tag)).toBeUndefined();
  });

  it('a kind without a read by identity is read in full, by the watcher and under the lease', async () => {
    const withoutReadById = kindsFor(config).map((h) => {
      if (h.kind !== 'scorecard') return h;
      // A copy of its `live` too: the registry's handler is shared by every test of the process.
      const without: AnyKindHandler = { ...h, live: { ...h.live } };
      delete without.live.fetchByIds;
      return without;
    });
    expect((await apply({ handlers: withoutReadById })).result.run.outcome).toBe('applied');
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Second') });
    const watched = await apply({ handlers: withoutReadById });
    expect(watched.result.run.read).toMatchObject({ path: 'full', reason: 'no-single-read' });
    await writeFiles(dir, { [`.cortex/scorecards/${tag}.yaml`]: scorecard('Third') });
    const once = await apply({ cached: false, handlers: withoutReadById });
    expect(once.result.run.read).toEqual({ path: 'full', underLease: 'full', fallback: 'no-single-read' });
    expect(nameOf(tag)).toBe('Third');
  });
});
