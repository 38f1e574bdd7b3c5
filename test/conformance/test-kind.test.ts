/**
 * A kind is a folder plus one line: `entity-note` (a test-only kind, its whole folder under
 * `test/conformance/entity-note/`) is registered beside the registry's kinds and runs through
 * everything a kind does — layout, validation, the apply order derived from what it references,
 * plan, apply, the ownership record, prune and export — with no file of `src/` naming it. The same
 * conformance checks as the registry's kinds (`kinds.test.ts`) hold for it. Against the emulator
 * on 127.0.0.1.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import type { ReconcileResult } from '../../src/core/model.js';
import type { SyncConfig } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { readWorkspaceForExport } from '../../src/engine/export-read.js';
import { memoryPlanLog } from '../../src/engine/plan-log.js';
import { reconcile, validateManifests } from '../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { exportFiles } from '../../src/export/files.js';
import { writeExportFiles } from '../../src/export/write.js';
import { readInventories } from '../../src/kinds/entity/records/inventory.js';
import { KIND_HANDLERS, kindsWith } from '../../src/kinds/registry.js';
import { parseManifestFile } from '../../src/source/yaml.js';
import { entityNoteKind, KIND } from './entity-note/index.js';

const FOLDER = join(import.meta.dirname, 'entity-note');
const FIXTURES = join(FOLDER, 'fixtures');
const SOURCE = 'test-kind-repo';
const NOW = Date.now();

/** The registry's kinds and the test-only kind, in the apply order derived from what each references. */
const kinds = kindsWith([entityNoteKind]);

const filesUnder = async (dir: string): Promise<string[]> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
};

const config = (dir: string, overrides: Partial<SyncConfig> = {}): SyncConfig => ({
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
  ...overrides,
});

const notesOf = (result: ReconcileResult): string[] =>
  'plan' in result ? result.plan.changes.filter((c) => c.kind === KIND).map((c) => `${c.action} ${c.id}`) : [];

let emulator: RunningEmulator;
let client: ApiClient;
let repo: string;
let out: string;
const run = (dir: string, mode: 'plan' | 'apply', overrides: Partial<SyncConfig> = {}) =>
  reconcile(
    { config: config(dir, overrides), mode, planLog: memoryPlanLog(), handlers: kinds },
    createEngineContext(client),
  );
const notesLive = async (entity: string): Promise<string[]> => {
  const res = await client.request<{ key: string; source: string }[]>({
    operation: 'list custom data',
    method: 'GET',
    path: `/api/v1/catalog/${entity}/custom-data`,
  });
  return res.body.filter((d) => d.source === 'API').map((d) => d.key);
};

beforeAll(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, sleep: async () => {} });
  repo = await mkdtemp(join(tmpdir(), 'cortex-sync-test-kind-'));
  out = await mkdtemp(join(tmpdir(), 'cortex-sync-test-kind-export-'));
  await cp(FIXTURES, repo, { recursive: true });
});

afterAll(async () => {
  await client?.close();
  await emulator?.stop();
  await rm(repo, { recursive: true, force: true });
  await rm(out, { recursive: true, force: true });
});

describe('a test-only kind registered from a fixture folder', () => {
  it('conforms: a readme, fixtures it owns that parse, and a manifest schema that exports as JSON Schema', async () => {
    expect(existsSync(join(FOLDER, 'readme.md'))).toBe(true);
    const notes = (await filesUnder(FIXTURES)).filter((f) => f.startsWith('.cortex/entity-notes/'));
    expect(notes.length).toBeGreaterThan(0);
    for (const file of notes) {
      expect(entityNoteKind.layout.ownsFile(file), file).toBe(true);
      const parsed = parseManifestFile(file, await readFile(join(FIXTURES, file), 'utf8'));
      for (const doc of parsed.documents)
        expect(entityNoteKind.manifest.parse(doc, { now: NOW }).diagnostics).toEqual([]);
    }
    expect(z.toJSONSchema(entityNoteKind.manifest.schema, { io: 'input', unrepresentable: 'any' })).toMatchObject({
      type: 'object',
    });
  });

  it('takes its place in the apply order from what it references: after entities', () => {
    const order = kinds.map((k) => k.kind);
    expect(order.indexOf(KIND)).toBeGreaterThan(order.indexOf('entity'));
    expect(order.filter((k) => k !== KIND)).toEqual(KIND_HANDLERS.map((k) => k.kind));
  });

  it('validates offline with the layout it declares: a misspelt folder is named, with the folder meant', async () => {
    const typo = await mkdtemp(join(tmpdir(), 'cortex-sync-test-kind-typo-'));
    try {
      await mkdir(join(typo, '.cortex/entity-note'), { recursive: true });
      await writeFile(join(typo, '.cortex/entity-note/x.yaml'), 'entity: ledger\nkey: note-x\nvalue: 1\n');
      const { diagnostics } = await validateManifests(typo, { signal: new AbortController().signal }, kinds);
      expect(diagnostics).toEqual([
        expect.objectContaining({
          code: 'unowned-manifest',
          message: expect.stringContaining('`.cortex/entity-notes/`'),
        }),
      ]);
    } finally {
      await rm(typo, { recursive: true, force: true });
    }
  });

  it('plans and applies: each note after its entity, recorded in the ownership record; the next plan has nothing to do', async () => {
    const applied = await run(repo, 'apply');
    expect(applied.status).toBe('applied');
    if (applied.status !== 'applied') return;
    expect(notesOf(applied)).toEqual(['create ledger:note-owner', 'create ledger:note-runbook']);
    expect(applied.report.results.every((r) => r.outcome === 'ok')).toBe(true);
    const note = applied.plan.changes.find((c) => c.id === 'ledger:note-owner');
    expect(note?.waitsFor).toEqual(['entity/ledger']);
    expect((await notesLive('ledger')).sort()).toEqual(['note-owner', 'note-runbook']);
    const record = await readInventories(client, SOURCE, new Set(kinds.map((k) => k.kind)));
    expect([...(record.bySource.get(SOURCE) ?? [])].filter((k) => k.startsWith(`${KIND}/`)).sort()).toEqual([
      'entity-note/ledger:note-owner',
      'entity-note/ledger:note-runbook',
    ]);
    expect(record.declared.get(SOURCE)?.get('entity-note/ledger:note-owner')).toEqual({
      file: '.cortex/entity-notes/ledger-owner.yaml',
    });

    const again = await run(repo, 'plan');
    expect(again.status).toBe('planned');
    expect(notesOf(again)).toEqual(['noop ledger:note-owner', 'noop ledger:note-runbook']);
    expect('plan' in again && again.plan.inventory).toEqual([]);
  });

  it('exports through the engine as the kind writes itself; the exported directory plans no change', async () => {
    const asked = new Set(['entity', KIND]);
    const read = await readWorkspaceForExport(
      {
        handlers: kinds,
        kinds: asked,
        includeArchived: false,
        sourceId: SOURCE,
        requestsPerMinute: 1000,
        progress: () => {},
      },
      createEngineContext(client),
    );
    const notes = read.live.filter((o) => o.kind === KIND);
    expect(notes.map((o) => [o.id, o.owner])).toEqual([
      ['ledger:note-owner', SOURCE],
      ['ledger:note-runbook', SOURCE],
    ]);
    const selected = exportFiles(read.live, {
      handlers: kinds,
      kinds: asked,
      only: 'all',
      includeArchived: false,
      declared: new Map(),
      sourceId: SOURCE,
      now: Date.parse('2026-01-01T00:00:00Z'),
    });
    expect(selected.files.filter((f) => f.kind === KIND).map((f) => f.path)).toEqual([
      expect.stringMatching(/^\.cortex\/entity-notes\/ledger.*note-owner.*\.yaml$/),
      expect.stringMatching(/^\.cortex\/entity-notes\/ledger.*note-runbook.*\.yaml$/),
    ]);
    await writeExportFiles(out, selected.files, false);
    const plan = await run(out, 'plan');
    expect(plan.status).toBe('planned');
    expect(notesOf(plan)).toEqual(['noop ledger:note-owner', 'noop ledger:note-runbook']);
    expect('plan' in plan && plan.plan.changes.every((c) => c.action === 'noop')).toBe(true);
  });

  it('prunes a note whose manifest is gone, and drops it from the ownership record', async () => {
    await rm(join(repo, '.cortex/entity-notes/ledger-runbook.yaml'));
    const pruned = await run(repo, 'apply', { prune: true, allowMassDelete: true });
    expect(pruned.status).toBe('applied');
    expect(notesOf(pruned)).toEqual(['noop ledger:note-owner', 'delete ledger:note-runbook']);
    expect(await notesLive('ledger')).toEqual(['note-owner']);
    const record = await readInventories(client, SOURCE, new Set(kinds.map((k) => k.kind)));
    expect(record.bySource.get(SOURCE)?.has('entity-note/ledger:note-runbook')).toBe(false);
    expect(record.bySource.get(SOURCE)?.has('entity-note/ledger:note-owner')).toBe(true);
  });
});
