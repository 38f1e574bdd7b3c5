/**
 * The plan of an incremental run is the plan a full read makes for the objects it covers. A
 * property over random edits (fast-check, a fixed seed): manifests edited (titles, owners, team
 * members, dependency edges, pages, templates, Initiatives and the scorecard each names,
 * scorecards, new entities and scorecards) and the workspace edited behind the repository's back
 * (a title changed, an entity archived, a scorecard renamed, in the UI); after each, the
 * plan made on the kept live state (`LiveCache`) and a plan made on a full read are compared on
 * every object the incremental plan covers — and it must cover every object whose manifest
 * changed. Then the edit is applied incrementally, and the next edit starts from there.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { ApiClient } from '../../src/api/types.js';
import { generateRepository } from '../../packages/bench/src/generate.js';
import { type Change, type ObjectKey, objectKey, type ReconcileResult } from '../../src/core/model.js';
import { resolveConfig, type SyncConfig } from '../../src/engine/config.js';
import { createEngineContext } from '../../src/engine/context.js';
import { LiveCache } from '../../src/engine/live-cache.js';
import { reconcile } from '../../src/engine/reconcile.js';
import { type RunningEmulator, startEmulator } from '../../packages/emulator/src/server.js';
import { removeDir, tempDir } from './helpers.js';

const API_KEY = 'incremental-property-key-0123456789';
const SOURCE = 'incremental-property';
const SERVICES = 48;
const TEAMS = 4;
/** Scorecards the repository declares, besides those only the workspace has. */
const CARDS = 2;
/** What an Initiative may name: a scorecard only listed (the emulator's own), or one declared here. */
const CARD_TAGS = ['production-readiness', ...Array.from({ length: CARDS }, (_, i) => `prop-card-${i}`)];

/** A scorecard with the ranks the generated Initiatives emphasize (1 to 3). */
const scorecardYaml = (tag: string, description: string): string =>
  `tag: ${tag}\nname: ${tag}\ndescription: ${description}\nladder:\n  levels:\n` +
  [1, 2, 3].map((rank) => `    - { name: Level ${rank}, rank: ${rank} }\n`).join('') +
  'rules:\n  - expression: git != null\n    level: Level 3\n';

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
let config: SyncConfig;
const cache = new LiveCache({ maxAgeMs: 3_600_000, maxObjects: 50 });

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
  dir = await tempDir('cortex-sync-incremental-');
  await generateRepository(dir, { entities: 60, sourceId: SOURCE });
  await mkdir(join(dir, '.cortex', 'scorecards'), { recursive: true });
  for (const tag of CARD_TAGS.slice(1))
    await writeFile(join(dir, '.cortex', 'scorecards', `${tag}.yaml`), scorecardYaml(tag, 'First.'));
  ({ config } = await resolveConfig(
    { dir },
    { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY, CORTEX_SYNC_ORIGIN: 'github.com/acme/property' },
    dir,
  ));
  const first = await reconcile({ config, mode: 'apply', session: { liveCache: cache } }, createEngineContext(client));
  if (first.run.outcome !== 'applied') throw new Error(`the repository did not apply: ${first.run.summaryLine}`);
}, 60_000);
afterAll(async () => {
  await client.close();
  await emulator.stop();
  await removeDir(dir);
});

const pad = (i: number) => String(i).padStart(5, '0');
const words = fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,18}[a-z]$/);

/** One edit: what it does, and the manifests (object keys) it changes. */
type Edit =
  | { op: 'retitle'; service: number; text: string }
  | { op: 'owner'; service: number; team: number }
  | { op: 'member'; team: number; text: string }
  | { op: 'edge'; text: string }
  | { op: 'page'; page: number; text: string }
  | { op: 'template'; template: number; text: string }
  | { op: 'initiative'; initiative: number; text: string }
  | { op: 'initiative-card'; initiative: number; card: number }
  | { op: 'scorecard'; card: number; text: string }
  | { op: 'new-scorecard'; text: string }
  | { op: 'ui-scorecard'; card: number; text: string; touch: boolean }
  | { op: 'new-service'; text: string }
  | { op: 'ui-retitle'; service: number; text: string }
  | { op: 'ui-archive'; service: number; touch: boolean };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('retitle' as const), service: fc.nat(SERVICES - 1), text: words }),
  fc.record({ op: fc.constant('owner' as const), service: fc.nat(SERVICES - 1), team: fc.nat(TEAMS - 1) }),
  fc.record({ op: fc.constant('member' as const), team: fc.nat(TEAMS - 1), text: words }),
  fc.record({ op: fc.constant('edge' as const), text: words }),
  fc.record({ op: fc.constant('page' as const), page: fc.nat(2), text: words }),
  fc.record({ op: fc.constant('template' as const), template: fc.nat(2), text: words }),
  fc.record({ op: fc.constant('initiative' as const), initiative: fc.nat(2), text: words }),
  fc.record({
    op: fc.constant('initiative-card' as const),
    initiative: fc.nat(2),
    card: fc.nat(CARD_TAGS.length - 1),
  }),
  fc.record({ op: fc.constant('scorecard' as const), card: fc.nat(CARDS - 1), text: words }),
  fc.record({ op: fc.constant('new-scorecard' as const), text: words }),
  fc.record({
    op: fc.constant('ui-scorecard' as const),
    card: fc.nat(CARDS - 1),
    text: words,
    touch: fc.boolean(),
  }),
  fc.record({ op: fc.constant('new-service' as const), text: words }),
  fc.record({ op: fc.constant('ui-retitle' as const), service: fc.nat(SERVICES - 1), text: words }),
  fc.record({ op: fc.constant('ui-archive' as const), service: fc.nat(SERVICES - 1), touch: fc.boolean() }),
);

let newServices = 0;
let newScorecards = 0;

/** Rewrites the first line matching `pattern`; whether the file changed. */
const rewrite = async (file: string, pattern: RegExp, line: string): Promise<boolean> => {
  const path = join(dir, file);
  const text = await readFile(path, 'utf8');
  if (!pattern.test(text)) throw new Error(`${file}: nothing matches ${pattern}`);
  const next = text.replace(pattern, line);
  await writeFile(path, next);
  return next !== text;
};

const api = (method: string, path: string) =>
  fetch(`${emulator.url}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}` } });

/** Makes the edit; returns the keys of the objects whose manifests it changed. */
const make = async (e: Edit): Promise<ObjectKey[]> => {
  const serviceFile = (i: number) => `.cortex/catalog/svc-${pad(i)}.yaml`;
  const cardFile = (i: number) => `.cortex/scorecards/prop-card-${i}.yaml`;
  const ifChanged = (changed: boolean, key: ObjectKey) => (changed ? [key] : []);
  switch (e.op) {
    case 'retitle':
      return ifChanged(
        await rewrite(serviceFile(e.service), /^ {2}title: .*$/m, `  title: ${e.text}`),
        objectKey('entity', `svc-${pad(e.service)}`),
      );
    case 'owner':
      return ifChanged(
        await rewrite(serviceFile(e.service), /name: team-\d{5}/, `name: team-${pad(e.team)}`),
        objectKey('entity', `svc-${pad(e.service)}`),
      );
    case 'member':
      return ifChanged(
        await rewrite(`.cortex/teams/team-${pad(e.team)}.yaml`, /- name: .*$/m, `- name: ${e.text}`),
        objectKey('entity', `team-${pad(e.team)}`),
      );
    case 'edge':
      // Which edge's key it is follows from the file; that it is planned is checked below like any other.
      await rewrite('.cortex/dependencies/svc-00000.yaml', /description: .*$/m, `description: ${e.text}.`);
      return [];
    case 'page':
      return ifChanged(
        await rewrite(`.cortex/catalog-pages/bench-page-${e.page}.yaml`, /^name: .*$/m, `name: ${e.text}`),
        objectKey('catalog-page', `bench-page-${e.page}`),
      );
    case 'template':
      return ifChanged(
        await rewrite(
          `.cortex/scaffolders/bench-template-${e.template}.yaml`,
          /^description: .*$/m,
          `description: ${e.text}`,
        ),
        objectKey('scaffolder-template', `bench-template-${e.template}`),
      );
    case 'initiative':
      return ifChanged(
        await rewrite(`.cortex/initiatives/bench-${e.initiative}.yaml`, /^description: .*$/m, `description: ${e.text}`),
        objectKey('initiative', `Bench initiative ${e.initiative}`),
      );
    case 'initiative-card':
      return ifChanged(
        await rewrite(
          `.cortex/initiatives/bench-${e.initiative}.yaml`,
          /^scorecardTag: .*$/m,
          `scorecardTag: ${CARD_TAGS[e.card] ?? ''}`,
        ),
        objectKey('initiative', `Bench initiative ${e.initiative}`),
      );
    case 'scorecard':
      return ifChanged(
        await rewrite(cardFile(e.card), /^description: .*$/m, `description: ${e.text}`),
        objectKey('scorecard', `prop-card-${e.card}`),
      );
    case 'new-scorecard': {
      newScorecards += 1;
      const tag = `prop-added-${newScorecards}`;
      await writeFile(join(dir, '.cortex', 'scorecards', `${tag}.yaml`), scorecardYaml(tag, e.text));
      return [objectKey('scorecard', tag)];
    }
    case 'ui-scorecard': {
      const card = emulator.state.scorecards.items.find((s) => s.tag === `prop-card-${e.card}`);
      if (card) card.name = `${e.text} (UI)`;
      if (!e.touch) return [];
      return ifChanged(
        await rewrite(cardFile(e.card), /^description: .*$/m, `description: Touched after a UI edit ${newScorecards}.`),
        objectKey('scorecard', `prop-card-${e.card}`),
      );
    }
    case 'new-service': {
      newServices += 1;
      const tag = `added-${newServices}`;
      await writeFile(
        join(dir, '.cortex', 'catalog', `${tag}.yaml`),
        `openapi: 3.0.1\ninfo:\n  title: ${e.text}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n  x-cortex-owners:\n    - type: group\n      name: team-00001\n      provider: CORTEX\n`,
      );
      return [objectKey('entity', tag)];
    }
    case 'ui-retitle': {
      const id = emulator.state.entities.idByTag[`svc-${pad(e.service)}`];
      const info = id ? emulator.state.entities.byId[id]?.descriptor.info : undefined;
      if (info && typeof info === 'object' && !Array.isArray(info))
        (info as Record<string, unknown>).title = `${e.text} (UI)`;
      return [];
    }
    case 'ui-archive': {
      await api('PUT', `/api/v1/catalog/svc-${pad(e.service)}/archive`);
      if (!e.touch) return [];
      return ifChanged(
        await rewrite(
          serviceFile(e.service),
          /^ {2}description: .*$/m,
          `  description: Touched after archive ${newServices}.`,
        ),
        objectKey('entity', `svc-${pad(e.service)}`),
      );
    }
  }
};

/** What a change is, for the comparison (ordering aside: it depends on the rest of the plan). */
const shape = (c: Change | undefined) =>
  c && {
    kind: c.kind,
    id: c.id,
    action: c.action,
    diff: c.diff,
    adopt: c.adopt ?? false,
    unarchive: c.unarchive ?? false,
    reason: c.reason,
  };

const changesOf = (r: ReconcileResult): Change[] => ('plan' in r ? r.plan.changes : []);
const errorsOf = (r: ReconcileResult): string[] =>
  r.diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => d.message)
    .sort();

describe('an incremental plan is the full plan of the objects it covers', () => {
  it('holds over random edits, and most edits are planned incrementally', async () => {
    const ctx = createEngineContext(client);
    let incremental = 0;
    let scorecardsIncremental = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 4 }), async (edits) => {
        runs += 1;
        const edited = new Set<ObjectKey>();
        for (const e of edits) for (const key of await make(e)) edited.add(key);

        const inc = await reconcile({ config, mode: 'plan', session: { liveCache: cache } }, ctx);
        const full = await reconcile({ config, mode: 'plan' }, ctx);
        expect(inc.status).toBe(full.status);
        expect(errorsOf(inc)).toEqual(errorsOf(full));
        if (inc.run.read?.path === 'incremental') {
          incremental += 1;
          if ([...edited].some((key) => key.startsWith('scorecard/'))) scorecardsIncremental += 1;
          const planned = new Map(changesOf(inc).map((c) => [objectKey(c.kind, c.id), c]));
          const fully = new Map(changesOf(full).map((c) => [objectKey(c.kind, c.id), c]));
          // It covers every object whose manifest changed…
          for (const key of edited) expect(planned.has(key), key).toBe(true);
          // …and plans each as the full read does.
          for (const [key, change] of planned) expect(shape(change), key).toEqual(shape(fully.get(key)));
        }
        const applied = await reconcile({ config, mode: 'apply', session: { liveCache: cache } }, ctx);
        expect(applied.run.outcome, applied.run.summaryLine).toBe('applied');
      }),
      { numRuns: 30, seed: 20_240_611, endOnFailure: true },
    );
    expect(runs).toBe(30);
    expect(incremental).toBeGreaterThanOrEqual(15);
    // Changed scorecards are read by identity too (not in full).
    expect(scorecardsIncremental).toBeGreaterThan(0);
  }, 240_000);
});
