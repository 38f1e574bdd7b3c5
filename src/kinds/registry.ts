/**
 * Every kind cortex-sync knows, keyed by its name: adding a kind is a folder plus one line here
 * (as Renovate's managers are listed in `manager/api.ts`; see `docs/adding-a-kind.md`). Each kind exports everything about
 * itself (title, layout folders, the kinds it references, settings, how export reads it); what is
 * derived here from those is the kinds' names (`KindName`), their apply order (`order.ts`) and the
 * type of their settings. Kinds that are only read (`managed: false`) sit here too.
 */
import { isReadOnly } from '../core/kind-contract.js';
import { catalogPageKind } from './catalog-page/index.js';
import { dependencyKind } from './dependency/index.js';
import { entityKind } from './entity/index.js';
import { entityTypeKind } from './entity-type/index.js';
import { initiativeKind } from './initiative/index.js';
import { applyOrder } from './order.js';
import { scaffolderTemplateKind } from './scaffolder-template/index.js';
import { scorecardKind } from './scorecard/index.js';
import type { AnySettingSpec } from '../core/settings.js';
import type { AnyKindHandler, AnyReadOnlyKind } from './types.js';

/**
 * The kinds cortex-sync ships, by name. A kind is registered by one line here; a test registers
 * one more with one line of its own: `createRegistry({ ...REGISTERED_KINDS, 'entity-note': entityNoteKind })`,
 * handed to the engine in its context (`EngineContext.kinds`).
 */
export const REGISTERED_KINDS = {
  'entity-type': entityTypeKind,
  entity: entityKind,
  dependency: dependencyKind,
  'catalog-page': catalogPageKind,
  initiative: initiativeKind,
  'scaffolder-template': scaffolderTemplateKind,
  scorecard: scorecardKind,
} as const;

type Registered = (typeof REGISTERED_KINDS)[keyof typeof REGISTERED_KINDS];

/** The name of every registered kind (managed or only read). */
export type KindName = keyof typeof REGISTERED_KINDS;

/** The names of the managed kinds. */
export type ManagedKindName = {
  [K in KindName]: (typeof REGISTERED_KINDS)[K] extends AnyReadOnlyKind ? never : K;
}[KindName];

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type SettingsOf<K> = K extends { configure(settings: infer C): unknown } ? C : never;

/**
 * The settings of every kind that has any, as fields of the run's configuration (each kind says
 * which it reads: `pruneEntities`, `forceEntityTypeSchema`). The engine's configuration holds them.
 */
export type KindSettings = UnionToIntersection<SettingsOf<Extract<Registered, { configure: unknown }>>>;

/** What a registry may list: a managed kind (configurable or not) or a kind only read. */
export type AnyRegisteredKind = AnyKindHandler | AnyReadOnlyKind;

/** A set of kinds and what is derived from it: apply order, kinds only read, configured kinds. */
export interface KindRegistry {
  /** Every managed kind with its default settings, in apply order. */
  readonly handlers: readonly AnyKindHandler[];
  /** The kinds that are only read (references to them are checked against the workspace). */
  readonly readOnly: readonly AnyReadOnlyKind[];
  /**
   * Every managed kind configured with the run's settings, in apply order. A configured kind keeps
   * its `settings` (its entries in the table of settings), as the registry's own does.
   */
  configured(settings: object): readonly AnyKindHandler[];
}

/** Has this kind settings and a `configure` (`ConfigurableKind`)? */
const isConfigurable = (
  kind: AnyKindHandler,
): kind is AnyKindHandler & { configure(settings: object): AnyKindHandler; settings: readonly AnySettingSpec[] } =>
  'configure' in kind && typeof kind.configure === 'function';

/** The registry of `kinds`, keyed by name (each key must be its kind's name). */
export const createRegistry = (kinds: Readonly<Record<string, AnyRegisteredKind>>): KindRegistry => {
  const entries = Object.entries(kinds);
  for (const [name, kind] of entries) {
    if (kind.kind !== name) throw new Error(`the registry lists kind \`${kind.kind}\` under \`${name}\``);
  }
  const listed = entries.map(([, kind]) => kind);
  const handlers = applyOrder(listed.filter((k): k is AnyKindHandler => !isReadOnly(k)));
  return {
    handlers,
    readOnly: listed.filter((k): k is AnyReadOnlyKind => isReadOnly(k)),
    configured: (settings) =>
      handlers.map((kind) => (isConfigurable(kind) ? { ...kind.configure(settings), settings: kind.settings } : kind)),
  };
};

/** The kinds cortex-sync ships. */
export const KINDS: KindRegistry = createRegistry(REGISTERED_KINDS);

/** Every managed kind with its default settings, in apply order. */
export const KIND_HANDLERS: readonly AnyKindHandler[] = KINDS.handlers;

/** The managed kinds' names, in apply order (the JSON plan's `kind`, `export --kinds`). */
export const KIND_NAMES: readonly ManagedKindName[] = KIND_HANDLERS.map((h) => h.kind as ManagedKindName);

/** The kinds that are only read (references to them are checked against the workspace). */
export const READ_ONLY_KINDS: readonly AnyReadOnlyKind[] = KINDS.readOnly;

/** Every managed kind configured with the run's settings, in apply order (each keeps its `settings`). */
export const kindsFor = (settings: KindSettings): readonly AnyKindHandler[] => KINDS.configured(settings);

/** The managed kinds plus `extra` (a kind registered elsewhere, e.g. by a test), in apply order. */
export const kindsWith = (extra: readonly AnyKindHandler[], base: readonly AnyKindHandler[] = KIND_HANDLERS) =>
  applyOrder([...base, ...extra]);

export const handlerFor = (kind: string): AnyKindHandler => {
  const handler = KIND_HANDLERS.find((h) => h.kind === kind);
  if (!handler) throw new Error(`no handler registered for kind ${kind}`);
  return handler;
};
