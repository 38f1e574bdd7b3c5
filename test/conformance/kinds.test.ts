/**
 * Conformance of every registered kind (the test enumerates the registry, so a new kind cannot be
 * added without passing it): it has a readme, fixtures that parse and sit where the kind finds
 * them, a manifest schema that exports as JSON Schema, and two round trips hold against the
 * emulator: apply the fixtures → the next plan is empty; live → `export.toManifestFiles` → load → the
 * plan is empty.
 */
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import type { LiveObject, ReconcileResult } from '../../src/core/model.js';
import type { SyncConfig } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { fetchLiveState } from '../../src/engine/fetch-live.js';
import { memoryPlanLog } from '../../src/engine/plan-log.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { manifestText } from '../../src/export/render.js';
import { OWNERSHIP_STORE } from '../../src/kinds/ownership.js';
import { KIND_HANDLERS, READ_ONLY_KINDS } from '../../src/kinds/registry.js';
import type { AnyKindHandler } from '../../src/kinds/types.js';
import { loadManifests } from '../../src/source/load.js';
import { parseManifestFile } from '../../src/source/yaml.js';
import { writeFiles } from '../engine/helpers.js';

const KINDS_DIR = join(import.meta.dirname, '..', '..', 'src', 'kinds');
const SOURCE = 'conformance-repo';
const NOW = Date.now();

const fixturesDir = (handler: AnyKindHandler): string => join(KINDS_DIR, handler.kind, 'fixtures');

/**
 * Every file under `dir`, relative, with `/` separators (dot folders such as `.cortex` included),
 * but the fixture folder's own `readme.md`, which says what the fixture is for.
 */
const filesUnder = async (dir: string): Promise<string[]> => {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((file) => file !== 'readme.md')
    .sort();
};

const config = (dir: string): SyncConfig => ({
  dir,
  sourceId: SOURCE,
  baseUrl: 'http://127.0.0.1',
  prune: false,
  pruneEntities: 'archive',
  allowMassDelete: false,
  allowTakeover: false,
  maxDeleteShare: 0.25,
  protect: [],
  concurrency: 4,
  requestsPerMinute: 1000,
  forceEntityTypeSchema: false,
});

const actionsOf = (result: ReconcileResult, handler: AnyKindHandler): string[] =>
  'plan' in result ? result.plan.changes.filter((c) => c.kind === handler.kind).map((c) => `${c.action} ${c.id}`) : [];

let emulator: RunningEmulator;
let client: ApiClient;
let repo: string;
let exported: string;
/** The plan right after applying every kind's fixtures. */
let replanned: ReconcileResult;
/** Per kind, the ids the exported files declare. */
const exportedIds = new Map<string, string[]>();
/** The plan of the exported files. */
let exportPlan: ReconcileResult;

beforeAll(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, sleep: async () => {} });
  repo = await mkdtemp(join(tmpdir(), 'cortex-sync-conformance-'));
  exported = await mkdtemp(join(tmpdir(), 'cortex-sync-conformance-export-'));
  for (const handler of KIND_HANDLERS) {
    if (existsSync(fixturesDir(handler))) await cp(fixturesDir(handler), repo, { recursive: true });
  }
  const ctx = createEngineContext(client);
  const applied = await reconcile({ config: config(repo), mode: 'apply', planLog: memoryPlanLog() }, ctx);
  if (applied.status !== 'applied')
    throw new Error(`the fixtures did not apply: ${JSON.stringify(applied.diagnostics)}`);
  const failed = applied.report.results.filter((r) => r.outcome !== 'ok');
  if (failed.length > 0) throw new Error(`fixture changes failed: ${failed.map((r) => r.error).join('; ')}`);
  replanned = await reconcile({ config: config(repo), mode: 'plan' }, ctx);

  // Export: what this source manages, as each kind writes it.
  const state = await fetchLiveState({
    client,
    handlers: KIND_HANDLERS,
    desired: [],
    sourceId: SOURCE,
  });
  const files: Record<string, string> = {};
  for (const handler of KIND_HANDLERS) {
    if (!handler.export?.toManifestFiles) continue;
    const ours: LiveObject[] = state.live.filter((o) => o.kind === handler.kind && o.owner === SOURCE);
    const written = handler.export?.toManifestFiles(ours);
    exportedIds.set(
      handler.kind,
      written.flatMap((f) => f.ids),
    );
    for (const file of written) files[file.path] = manifestText(handler.kind, file.document);
  }
  await writeFiles(exported, files);
  exportPlan = await reconcile({ config: config(exported), mode: 'plan' }, ctx);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await emulator?.stop();
  await rm(repo, { recursive: true, force: true });
  await rm(exported, { recursive: true, force: true });
});

describe.each(KIND_HANDLERS.map((handler) => [handler.kind, handler] as const))('kind %s', (_, handler) => {
  it('has a readme', () => {
    expect(existsSync(join(KINDS_DIR, handler.kind, 'readme.md'))).toBe(true);
  });

  it('has fixtures that parse without errors, in files the kind owns', async () => {
    const files = await filesUnder(fixturesDir(handler));
    expect(files.length).toBeGreaterThan(0);
    let objects = 0;
    for (const file of files) {
      expect(handler.layout.ownsFile(file), file).toBe(true);
      const parsed = parseManifestFile(file, await readFile(join(fixturesDir(handler), file), 'utf8'));
      expect(parsed.diagnostics, file).toEqual([]);
      for (const doc of parsed.documents) {
        const result = handler.manifest.parse(doc, { now: NOW });
        expect(
          result.diagnostics.filter((d) => d.severity === 'error'),
          file,
        ).toEqual([]);
        objects += result.objects.length;
      }
    }
    expect(objects).toBeGreaterThan(0);
  });

  it('declares the kinds its fixtures reference (refersTo) and owns the files of the folders it declares', async () => {
    const known = new Set([...KIND_HANDLERS, ...READ_ONLY_KINDS].map((k) => k.kind));
    for (const file of await filesUnder(fixturesDir(handler))) {
      const parsed = parseManifestFile(file, await readFile(join(fixturesDir(handler), file), 'utf8'));
      for (const doc of parsed.documents) {
        for (const obj of handler.manifest.parse(doc, { now: NOW }).objects) {
          for (const ref of handler.manifest.references(obj)) {
            expect(handler.refersTo ?? [], `${file}: ${ref.field}`).toContain(ref.kind);
            expect(known.has(ref.kind), ref.kind).toBe(true);
          }
        }
      }
    }
    for (const folder of handler.layout.folders ?? [])
      expect(handler.layout.ownsFile(`.cortex/${folder}/x.yaml`)).toBe(true);
  });

  it('exports its manifest schema as a JSON Schema object', () => {
    const schema = z.toJSONSchema(handler.manifest.schema, { io: 'input', unrepresentable: 'any' });
    expect(schema).toMatchObject({ type: 'object' });
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  it('round trip: after applying its fixtures, the plan has nothing to do', () => {
    const actions = actionsOf(replanned, handler);
    expect(replanned.status).toBe('planned');
    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((a) => !a.startsWith('noop '))).toEqual([]);
  });

  it.skipIf(!handler.live.fetchByIds)(
    'reads by identity what the bulk read reads, and nothing for an id with no object',
    async () => {
      const loaded = await loadManifests(repo, KIND_HANDLERS, { now: NOW });
      const state = await fetchLiveState({
        client,
        handlers: KIND_HANDLERS,
        desired: loaded.objects,
        sourceId: SOURCE,
      });
      const desired = loaded.objects.filter((o) => o.kind === handler.kind);
      const ids = desired.map((o) => o.id);
      expect(ids.length).toBeGreaterThan(0);
      // Owners of kinds without a marker of their own are the engine's to set, from the records.
      const comparable = (o: LiveObject) => (handler.live.ownershipOnObject ? o : { ...o, owner: undefined });
      const byKey = (a: LiveObject, b: LiveObject) => a.id.localeCompare(b.id);
      const bulk = state.live.filter((o) => o.kind === handler.kind && ids.includes(o.id) && !OWNERSHIP_STORE.isOwn(o));
      expect(bulk.length).toBe(new Set(ids).size);
      const missing = `${ids[0] ?? ''}-not-there`;
      const from = emulator.requests.length;
      const read = await handler.live.fetchByIds?.([...ids, missing], {
        client,
        desired,
        managedIds: [],
        readBefore: state.live.filter((o) => (handler.live.uses ?? []).includes(o.kind) && !OWNERSHIP_STORE.isOwn(o)),
      });
      expect(emulator.requests.slice(from).every((r) => r.method === 'GET')).toBe(true);
      expect((read ?? []).map(comparable).sort(byKey)).toEqual(bulk.map(comparable).sort(byKey));
    },
  );

  it.skipIf(!handler.export?.toManifestFiles)(
    'round trip: live → toManifestFiles → load → the plan has nothing to do',
    () => {
      expect(exportPlan.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const ids = exportedIds.get(handler.kind) ?? [];
      expect(ids.length).toBeGreaterThan(0);
      const actions = actionsOf(exportPlan, handler);
      expect(actions.map((a) => a.slice(a.indexOf(' ') + 1)).sort()).toEqual([...ids].sort());
      expect(actions.filter((a) => !a.startsWith('noop '))).toEqual([]);
    },
  );
});

describe.each(READ_ONLY_KINDS.map((kind) => [kind.kind, kind] as const))('kind %s (only read)', (_, kind) => {
  it('has a readme, and a managed kind references it (else nothing reads it)', () => {
    expect(existsSync(join(KINDS_DIR, kind.kind, 'readme.md'))).toBe(true);
    expect(KIND_HANDLERS.some((h) => (h.refersTo ?? []).includes(kind.kind))).toBe(true);
  });
});
