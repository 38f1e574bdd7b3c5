/**
 * A saved plan (`plan --out FILE`, `apply FILE`; Terraform's plan file): the format, its strict
 * schema for reading a file back, and the pure judgement of whether a plan made now is the saved
 * one — and when not, what moved (`whatMoved`). Digests are computed by the engine
 * (`engine/saved-plan.ts`); here they are strings compared.
 *
 * The file is untrusted input (it may come from a pull request's artifact): it is read strictly,
 * its values are only ever compared with what a run computes now, and they are escaped wherever
 * they are printed. A plan is applied only when the plan made now, from the manifests and the
 * workspace as they are, has the same steps, read the same values of every object it writes and
 * the same records, from the same manifests with the same settings.
 */
import { z } from 'zod';
import { printable } from './printable.js';

export const SAVED_PLAN_FORMAT = 'cortex-sync-plan';
export const SAVED_PLAN_VERSION = 1;

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected sha256:<64 hex digits>');

/** The settings that shaped the plan (what it may remove, what it may take over). */
const savedSettingsSchema = z.strictObject({
  prune: z.boolean(),
  pruneEntities: z.enum(['archive', 'delete']),
  /** How entities were planned to be written (absent in plans of older versions: replace). */
  entityWrites: z.enum(['replace', 'merge']).optional(),
  /** Made with --force-conflicts (absent in plans of older versions: no). */
  forceConflicts: z.boolean().optional(),
  allowMassDelete: z.boolean(),
  allowTakeover: z.boolean(),
  maxDeleteShare: z.number(),
  maxDeleteCount: z.number().nullable(),
  protect: z.array(z.string()),
  forceEntityTypeSchema: z.boolean(),
  strict: z.boolean(),
  allowEmpty: z.boolean(),
});
export type SavedSettings = z.infer<typeof savedSettingsSchema>;

/** One step the apply takes: an object's change or a write of the ownership record, and its digest. */
const stepSchema = z.strictObject({
  /** `kind/id`, or `inventory/<record>@before|after`. */
  key: z.string(),
  action: z.string(),
  digest,
  /** The change as the plan shows it (the field diff, the reason, its flags). */
  change: z.record(z.string(), z.json()),
  /** Where it was declared (not part of the step's digest). */
  source: z.string().optional(),
  line: z.number().int().optional(),
});
export type SavedStep = z.infer<typeof stepSchema>;

/** What the plan read of an object it writes: the digest of the live value (null: absent). */
const readSchema = z.strictObject({ key: z.string(), digest: digest.nullable() });
type SavedRead = z.infer<typeof readSchema>;

const fileDigestSchema = z.strictObject({ path: z.string(), digest });

/** The body of a saved plan: everything its `digest` covers. */
export const savedPlanBodySchema = z.strictObject({
  format: z.literal(SAVED_PLAN_FORMAT),
  version: z.literal(SAVED_PLAN_VERSION),
  /** The cortex-sync version that wrote it (information only). */
  cortexSync: z.string(),
  createdAt: z.string(),
  /** The API it was planned against: applied only against the same. */
  baseUrl: z.string(),
  /**
   * The manifest root, relative to the working tree the plan was made in (`.`, `infra`):
   * `apply FILE` loads the manifests from it, relative to its own working tree (or `--dir`), and
   * refuses a root that is absolute or leaves the working tree (`savedRootProblem`).
   */
  dir: z.string(),
  sourceId: z.string().nullable(),
  origin: z.string().nullable(),
  settings: savedSettingsSchema,
  manifests: z.strictObject({ digest, files: z.array(fileDigestSchema) }),
  /** The ownership records as read (every source's, this one's own included). */
  records: digest,
  reads: z.array(readSchema),
  steps: z.array(stepSchema),
  summary: z.strictObject({
    create: z.number().int(),
    update: z.number().int(),
    delete: z.number().int(),
    archive: z.number().int(),
    noop: z.number().int(),
  }),
});
export type SavedPlanBody = z.infer<typeof savedPlanBodySchema>;

export const savedPlanSchema = savedPlanBodySchema.extend({ digest });
export type SavedPlan = z.infer<typeof savedPlanSchema>;

/**
 * Why a saved plan's manifest root cannot be read (undefined: it can): a plan file may come from
 * an artifact or a pull request, so it never names a folder outside the working tree it is
 * applied in — no absolute path, no `..` segment, no backslash or NUL.
 */
export const savedRootProblem = (dir: string): string | undefined => {
  if (dir === '') return 'is empty';
  if (/[\\\0]/.test(dir)) return 'holds a backslash or NUL';
  if (dir.startsWith('/') || /^[A-Za-z]:/.test(dir)) return 'is an absolute path';
  if (dir.split('/').includes('..')) return 'leaves the working tree (a `..` segment)';
  return undefined;
};

/** What a run computes now to compare with a saved plan (the parts a plan alone gives, or all). */
export type FreshPlan = Pick<SavedPlanBody, 'reads' | 'steps'> &
  Partial<Pick<SavedPlanBody, 'sourceId' | 'origin' | 'settings' | 'manifests' | 'records'>>;

/** One thing that moved since the plan was saved, said for a person (values escaped). */
export interface Moved {
  what: 'source' | 'origin' | 'setting' | 'manifest' | 'records' | 'object' | 'step';
  /** What it is about: a setting's name, a file, `kind/id`. */
  name: string;
  message: string;
}

const shown = (value: unknown): string => printable(JSON.stringify(value) ?? 'unset');

const settingsMoved = (saved: SavedSettings, now: SavedSettings): Moved[] =>
  (Object.keys(saved) as (keyof SavedSettings)[])
    .filter((key) => JSON.stringify(saved[key]) !== JSON.stringify(now[key]))
    .map((key) => ({
      what: 'setting',
      name: key,
      message: `setting ${key} was ${shown(saved[key])} when planned, is ${shown(now[key])} now`,
    }));

const filesMoved = (saved: SavedPlanBody['manifests'], now: SavedPlanBody['manifests']): Moved[] => {
  if (saved.digest === now.digest) return [];
  const before = new Map(saved.files.map((f) => [f.path, f.digest]));
  const after = new Map(now.files.map((f) => [f.path, f.digest]));
  const out: Moved[] = [];
  for (const [path, d] of before) {
    const name = printable(path);
    if (!after.has(path)) out.push({ what: 'manifest', name, message: `manifest ${name} was removed` });
    else if (after.get(path) !== d) out.push({ what: 'manifest', name, message: `manifest ${name} changed` });
  }
  for (const path of after.keys())
    if (!before.has(path))
      out.push({ what: 'manifest', name: printable(path), message: `manifest ${printable(path)} was added` });
  if (out.length === 0) out.push({ what: 'manifest', name: '', message: 'the manifests changed' });
  return out;
};

const readsMoved = (saved: readonly SavedRead[], now: readonly SavedRead[]): Moved[] => {
  const fresh = new Map(now.map((r) => [r.key, r.digest]));
  const out: Moved[] = [];
  for (const r of saved) {
    const name = printable(r.key);
    if (!fresh.has(r.key)) continue;
    const d = fresh.get(r.key);
    if (d === r.digest) continue;
    const how = r.digest === null ? 'was created' : d === null ? 'is gone' : 'changed';
    out.push({ what: 'object', name, message: `${name} ${how} in the workspace since the plan` });
  }
  return out;
};

const stepsMoved = (saved: readonly SavedStep[], now: readonly SavedStep[]): Moved[] => {
  const fresh = new Map(now.map((s) => [s.key, s]));
  const before = new Set(saved.map((s) => s.key));
  const out: Moved[] = [];
  for (const s of saved) {
    const n = fresh.get(s.key);
    const name = printable(s.key);
    if (n === undefined)
      out.push({ what: 'step', name, message: `${printable(s.action)} ${name} is no longer planned` });
    else if (n.digest !== s.digest)
      out.push({ what: 'step', name, message: `${name} would now be ${printable(n.action)}, not as saved` });
  }
  for (const n of now)
    if (!before.has(n.key))
      out.push({
        what: 'step',
        name: printable(n.key),
        message: `${printable(n.action)} ${printable(n.key)} is planned now`,
      });
  const order = (steps: readonly SavedStep[]) => steps.map((s) => s.digest).join(' ');
  if (out.length === 0 && order(saved) !== order(now))
    out.push({ what: 'step', name: '', message: 'the steps are in another order now' });
  return out;
};

/**
 * What moved between the saved plan and the plan made now (empty: the same plan, apply it). The
 * source, its origin, the settings, the manifests and the records are compared when `now` has
 * them; the objects the plan writes and the steps always. An object that moved is named once,
 * the steps it changes are not repeated.
 */
export const whatMoved = (saved: SavedPlanBody, now: FreshPlan): Moved[] => {
  const out: Moved[] = [];
  if (now.sourceId !== undefined && now.sourceId !== saved.sourceId)
    out.push({
      what: 'source',
      name: 'sourceId',
      message: `the source id was ${shown(saved.sourceId)} when planned, is ${shown(now.sourceId)} now`,
    });
  if (now.origin !== undefined && now.origin !== saved.origin)
    out.push({
      what: 'origin',
      name: 'origin',
      message: `the origin was ${shown(saved.origin)} when planned, is ${shown(now.origin)} now`,
    });
  if (now.settings !== undefined) out.push(...settingsMoved(saved.settings, now.settings));
  if (now.manifests !== undefined) out.push(...filesMoved(saved.manifests, now.manifests));
  const objects = readsMoved(saved.reads, now.reads);
  out.push(...objects);
  if (now.records !== undefined && now.records !== saved.records)
    out.push({ what: 'records', name: 'records', message: 'the ownership records changed since the plan' });
  const named = new Set(objects.map((o) => o.name));
  out.push(...stepsMoved(saved.steps, now.steps).filter((s) => !named.has(s.name)));
  return out;
};
