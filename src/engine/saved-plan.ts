/**
 * Saved plans (`core/saved-plan.ts` is the format and the judgement): what a planned pass is as a
 * saved plan, the digests (of each step, of each object's live value as read, of the records, of
 * each manifest file, of the whole file), writing the file (atomically, never through a symlink)
 * and reading it back strictly. Nothing here holds the key, a header or a proxy: a saved plan is
 * made of the plan, the manifests' digests and the settings that shape a plan, nothing else.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { canonicalJson, sortKeys } from '../core/diff.js';
import { ConfigError, CortexSyncError } from '../core/errors.js';
import type { ApiClient } from '../api/types.js';
import {
  type DesiredObject,
  type JsonValue,
  type KindName,
  type LiveObject,
  objectKey,
  type Plan,
} from '../core/model.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { readNamedRecords } from './fetch-live.js';
import { readByKeys, readStoreUses, unreadableById } from './recheck.js';
import { stepDigest, stepsOf } from '../core/plan-steps.js';
import { printable } from '../core/printable.js';
import {
  type FreshPlan,
  type Moved,
  SAVED_PLAN_FORMAT,
  SAVED_PLAN_VERSION,
  type SavedPlan,
  type SavedPlanBody,
  savedPlanBodySchema,
  savedPlanSchema,
  type SavedSettings,
  whatMoved,
} from '../core/saved-plan.js';
import { othersFingerprint, sortedMeta } from '../ownership/index-records.js';
import type { OwnershipIndex, OwnershipStore } from '../ownership/store.js';
import type { SyncConfig } from './config.js';
import { folderProblem, foldersOf, targetProblem } from './no-follow-path.js';
import type { PlannedPass } from './stages/run.js';

const sha256 = (text: string | Buffer): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

export { stepDigest, stepsOf } from '../core/plan-steps.js';

/** An object's live value as the plan read it (what `recheck.ts` `sameLive` compares), or null: absent. */
export const liveDigest = (o: LiveObject | undefined): string | null =>
  o === undefined
    ? null
    : sha256(
        canonicalJson(
          sortKeys({
            owner: o.owner ?? null,
            archived: o.archived ?? false,
            protected: o.protected ?? false,
            serverId: o.serverId ?? null,
            state: o.state as JsonValue,
          }),
        ),
      );

/**
 * What the plan read of every object it writes; `all`: of every object it planned (a plan made now
 * is compared by the saved plan's objects, one it no longer writes included).
 */
export const readsOf = (plan: Plan, all = false): FreshPlan['reads'] =>
  plan.changes
    .filter((c) => all || c.action !== 'noop')
    .map((c) => ({ key: `${c.kind}/${c.id}`, digest: liveDigest(c.live) }));

/** Every source's record as read (this source's own keys, meta and existence, and the others'). */
export const recordsDigest = (index: OwnershipIndex, sourceId: string | undefined): string =>
  sha256(
    JSON.stringify({
      others: othersFingerprint(index, sourceId ?? ''),
      keys: [...(index.bySource.get(sourceId ?? '') ?? [])].sort(),
      exists: index.bySource.has(sourceId ?? ''),
      meta: sortedMeta(index.meta.get(sourceId ?? '')),
    }),
  );

/** The settings of a run that shape its plan. */
export const settingsOf = (config: SyncConfig): SavedSettings => ({
  prune: config.prune,
  pruneEntities: config.pruneEntities,
  entityWrites: config.entityWrites ?? 'replace',
  forceConflicts: config.forceConflicts === true,
  allowMassDelete: config.allowMassDelete,
  allowTakeover: config.allowTakeover,
  maxDeleteShare: config.maxDeleteShare,
  maxDeleteCount: config.maxDeleteCount ?? null,
  protect: [...config.protect],
  forceEntityTypeSchema: config.forceEntityTypeSchema,
  strict: config.strict ?? false,
  allowEmpty: config.allowEmpty ?? false,
});

/** The repository's settings file, part of what a plan was made from. */
const SETTINGS_FILE = 'cortex-sync.yaml';

/**
 * The digest of every file the plan's manifests came from (and of `cortex-sync.yaml`), by path
 * relative to the manifest root. A file that cannot be read now has no digest (it moved).
 */
export const manifestsOf = (pass: PlannedPass, dir: string): Promise<SavedPlanBody['manifests']> =>
  manifestFiles(pass.desired, dir);

/** The digest of each file `desired` came from, and of `cortex-sync.yaml`, by path relative to `dir`. */
const manifestFiles = async (desired: readonly DesiredObject[], dir: string): Promise<SavedPlanBody['manifests']> => {
  const paths = [...new Set([SETTINGS_FILE, ...desired.map((d) => d.source.file)])].sort();
  const files: SavedPlanBody['manifests']['files'] = [];
  for (const path of paths) {
    const text = await readFile(join(dir, path)).catch(() => undefined);
    if (text !== undefined) files.push({ path, digest: sha256(text) });
  }
  return { digest: sha256(canonicalJson(files.map((f) => [f.path, f.digest]))), files };
};

/** What a planned pass is, compared with a saved plan (everything but when and by which version). */
export const freshPlanOf = async (
  pass: PlannedPass,
  config: SyncConfig,
  all = false,
): Promise<Required<FreshPlan>> => ({
  sourceId: pass.sourceId ?? null,
  origin: config.origin ?? null,
  settings: settingsOf(config),
  manifests: await manifestsOf(pass, config.dir),
  records: recordsDigest(pass.ownership.index, pass.sourceId),
  reads: readsOf(pass.plan, all),
  steps: stepsOf(pass.plan),
});

/** The digest of a saved plan's body. */
export const bodyDigest = (body: SavedPlanBody): string => sha256(canonicalJson(sortKeys(body)));

/** The body with its digest. */
export const sealSavedPlan = (body: SavedPlanBody): SavedPlan => {
  const { digest: _old, ...rest } = body as SavedPlanBody & { digest?: string };
  return { ...rest, digest: bodyDigest(rest) };
};

/**
 * The manifest root relative to the working tree (`cwd`), `/`-separated; a root outside it is
 * refused (a saved plan never names a folder outside the working tree it is applied in).
 */
export const rootInWorkingTree = (dir: string, cwd: string): string => {
  const rel = relative(cwd, dir);
  if (rel.startsWith('..') || isAbsolute(rel))
    throw new ConfigError(
      `cannot save a plan of the manifest root ${printable(dir)}: it is outside the working directory ${printable(cwd)}; run plan --out from a folder that holds it (the plan file names the root relative to it)`,
    );
  return rel === '' ? '.' : rel.split(sep).join('/');
};

/** A planned pass as a saved plan; `made.cwd`: the working tree the manifest root is named relative to. */
export const savedPlanOf = async (
  pass: PlannedPass,
  config: SyncConfig,
  made: { now: number; version: string; cwd: string },
): Promise<SavedPlan> =>
  sealSavedPlan({
    format: SAVED_PLAN_FORMAT,
    version: SAVED_PLAN_VERSION,
    cortexSync: made.version,
    createdAt: new Date(made.now).toISOString(),
    baseUrl: config.baseUrl,
    dir: rootInWorkingTree(config.dir, made.cwd),
    ...(await freshPlanOf(pass, config)),
    summary: { ...pass.plan.summary },
  });

/** A saved plan that cannot be applied (`stale-plan`): what moved since, named. Nothing was written. */
export class StalePlanError extends CortexSyncError {
  readonly moved: readonly Moved[];
  constructor(file: string, moved: readonly Moved[]) {
    const listed = moved.slice(0, 20).map((m) => m.message);
    const more = moved.length > 20 ? `; and ${moved.length - 20} more` : '';
    super(
      'STALE_PLAN',
      `saved plan ${printable(file)} is stale (stale-plan): ${listed.join('; ')}${more}. Nothing was written; make a new plan with plan --out`,
    );
    this.name = 'StalePlanError';
    this.moved = moved;
  }
}

/** Plan files larger than this are refused before they are parsed. */
export const MAX_PLAN_FILE_BYTES = 256 * 1024 * 1024;

const refuse = (file: string, why: string): never => {
  throw new ConfigError(`plan file ${printable(file)}: ${why}; nothing was applied`);
};

/**
 * A plan file read back strictly: refused (naming the file) when it is not a regular file, not
 * JSON, not a cortex-sync plan, of another version, fails the schema, or its digest (or a step's)
 * does not match what it holds.
 */
export const readSavedPlan = async (file: string): Promise<SavedPlan> => {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined) return refuse(file, 'not found');
  if (!found.isFile()) return refuse(file, 'not a regular file');
  if (found.size > MAX_PLAN_FILE_BYTES) return refuse(file, `larger than ${MAX_PLAN_FILE_BYTES} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    return refuse(file, `not JSON (${printable(error instanceof Error ? error.message : String(error))})`);
  }
  const head = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  if (head.format !== SAVED_PLAN_FORMAT)
    return refuse(file, 'not a cortex-sync plan (no "format": "cortex-sync-plan")');
  if (head.version !== SAVED_PLAN_VERSION)
    return refuse(
      file,
      `written in plan format version ${printable(JSON.stringify(head.version) ?? 'none')}, which this cortex-sync (format ${SAVED_PLAN_VERSION}) cannot read; use the cortex-sync that made it, or plan again`,
    );
  const parsed = savedPlanSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join('.') ?? '';
    return refuse(file, `not a valid plan file: ${printable(where || '(top)')}: ${printable(issue?.message ?? '')}`);
  }
  const plan = parsed.data;
  const { digest, ...body } = plan;
  if (bodyDigest(savedPlanBodySchema.parse(body)) !== digest)
    return refuse(file, 'its digest does not match what it holds (the file was edited or is corrupt)');
  const badStep = plan.steps.find((s) => stepDigest(s.change as Record<string, JsonValue>) !== s.digest);
  if (badStep !== undefined)
    return refuse(file, `the step ${printable(badStep.key)} does not match its digest (the file was edited)`);
  return plan;
};

/**
 * Writes the plan to `file` atomically (a temporary file beside it, then renamed over it), never
 * through a symlink: every folder from `anchor` (the working directory, when `file` is inside it)
 * down must be a real folder, and `file` absent or a regular file. A refusal names the path.
 */
export const writeSavedPlan = async (file: string, plan: SavedPlan, anchor: string): Promise<void> => {
  const target = resolve(anchor, file);
  const rel = relative(anchor, target);
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  const base = inside ? anchor : dirname(target);
  const fail = (path: string, problem: string): never => {
    throw new ConfigError(
      `cannot write the plan to ${printable(file)}: ${printable(path)} ${problem}; nothing was written`,
    );
  };
  for (const folder of foldersOf(relative(base, target).split(sep).join('/'))) {
    const found = await lstat(join(base, folder)).catch(() => undefined);
    if (found === undefined) fail(join(base, folder), 'does not exist');
    const problem = found && folderProblem(found);
    if (problem !== undefined) fail(join(base, folder), problem);
  }
  const check = async () => {
    const there = await lstat(target).catch(() => undefined);
    const problem = there && targetProblem(there, false);
    if (problem !== undefined) fail(file, problem);
  };
  await check();
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  // `wx`: created here, never an existing file or link.
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(plan, null, 2)}\n`);
    await handle.sync();
    await handle.close();
    await check();
    // A rename replaces the name itself, never writes through a link.
    await rename(temp, target);
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
};

/**
 * The judgement of `apply FILE`, at the two points the engine offers: after the first read (before
 * the lease: a stale plan writes nothing at all), everything — the source, its origin, the
 * settings, the manifests, the records, what the plan writes as read, the steps; and before the
 * first write (under the lease, after the objects were read again by identity, or the whole
 * workspace when they had changed), the plan that is about to be applied: its steps and what they
 * were computed from. Either throws `StalePlanError` naming what moved.
 */
export const savedPlanJudge = (saved: SavedPlan, file: string) => ({
  firstPass: async (pass: PlannedPass, config: SyncConfig): Promise<void> => {
    const moved = whatMoved(saved, await freshPlanOf(pass, config, true));
    if (moved.length > 0) throw new StalePlanError(file, moved);
  },
  beforeWrites: (plan: Plan): void => {
    const moved = whatMoved(saved, { reads: readsOf(plan, true), steps: stepsOf(plan) });
    if (moved.length > 0) throw new StalePlanError(file, moved);
  },
});

/** The most objects the pre-check reads by identity; a longer plan is judged on the full read under the lease. */
const MAX_PRECHECK_READS = 500;

/** What the identity pre-check reads with: the run's client, kinds and store (a `StageContext`'s). */
export interface PrecheckIo {
  client: ApiClient;
  handlers: readonly AnyKindHandler[];
  lookup: (kind: KindName) => AnyKindHandler;
  store: OwnershipStore;
  sourceId: string | undefined;
}

/**
 * `apply FILE`'s first judgement, before the lease, without reading the workspace: the source,
 * the settings and the manifests (loaded now) as saved; then the records, and each object the
 * plan writes read by identity (only kinds the run manages and that have such a read), as the
 * plan read them. Throws `StalePlanError` naming what moved. What it does not cover (the rest of
 * the workspace, an object of a kind with no read by identity) the full read under the lease
 * judges (`savedPlanJudge.firstPass`), before any write.
 */
export const savedPlanPrecheck =
  (saved: SavedPlan, file: string, config: SyncConfig) =>
  async (desired: readonly DesiredObject[], io: PrecheckIo): Promise<void> => {
    const managed = new Set(io.handlers.map((h) => h.kind));
    // Only objects a step writes, and at most as many as a plan re-checks one by one: the file is
    // untrusted, and a long list of reads is left to the full read under the lease.
    const written = new Set(saved.steps.map((step) => step.key));
    const listed = saved.reads.filter((r) => written.has(r.key));
    const targets = (listed.length > MAX_PRECHECK_READS ? [] : listed).flatMap((r) => {
      const cut = r.key.indexOf('/');
      const kind = r.key.slice(0, cut);
      return cut > 0 && managed.has(kind) && io.lookup(kind).live.fetchByIds !== undefined
        ? [{ kind: kind, id: r.key.slice(cut + 1) }]
        : [];
    });
    const seen = await readStoreUses(io);
    const fromList = await io.store.read(io.client, {
      sourceId: io.sourceId,
      seen,
      kinds: new Set(io.handlers.map((h) => h.kind)),
    });
    const fresh = await readByKeys({
      client: io.client,
      targets,
      lookup: io.lookup,
      handlers: io.handlers,
      desired,
      readBefore: seen,
      index: fromList.index,
      sourceId: io.sourceId,
    }).catch(unreadableById);
    // The records of the sources those objects name that the list left out, read by their tags as
    // the plan read them: else a list leaving one out again reads as the records having changed.
    const ownership = await readNamedRecords(
      io.client,
      io.handlers,
      desired,
      [...(fresh?.values() ?? [])],
      fromList,
      io.sourceId,
    );
    const read = new Set(fresh === undefined ? [] : targets.map((t) => `${t.kind}/${t.id}`));
    const moved = whatMoved(saved, {
      sourceId: io.sourceId ?? null,
      origin: config.origin ?? null,
      settings: settingsOf(config),
      manifests: await manifestFiles(desired, config.dir),
      records: recordsDigest(ownership.index, io.sourceId),
      reads: saved.reads
        .filter((r) => read.has(r.key))
        .map((r) => {
          const cut = r.key.indexOf('/');
          return {
            key: r.key,
            digest: liveDigest(fresh?.get(objectKey(r.key.slice(0, cut), r.key.slice(cut + 1)))),
          };
        }),
      // The steps are judged on the full read under the lease.
      steps: saved.steps,
    });
    if (moved.length > 0) throw new StalePlanError(file, moved);
  };
