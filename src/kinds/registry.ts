/**
 * Every kind cortex-sync knows, keyed by its name: adding a kind is a folder plus one line here
 * (as Renovate's managers are listed in `manager/api.ts`). Each kind exports everything about
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
import type { AnyKindHandler, AnyReadOnlyKind } from './types.js';

const REGISTRY = {
  'entity-type': entityTypeKind,
  entity: entityKind,
  dependency: dependencyKind,
  'catalog-page': catalogPageKind,
  initiative: initiativeKind,
  'scaffolder-template': scaffolderTemplateKind,
  scorecard: scorecardKind,
} as const;

type Registered = (typeof REGISTRY)[keyof typeof REGISTRY];

/** The name of every registered kind (managed or only read). */
export type KindName = keyof typeof REGISTRY;

/** The names of the managed kinds. */
export type ManagedKindName = { [K in KindName]: (typeof REGISTRY)[K] extends AnyReadOnlyKind ? never : K }[KindName];

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type SettingsOf<K> = K extends { configure(settings: infer C): unknown } ? C : never;

/**
 * The settings of every kind that has any, as fields of the run's configuration (each kind says
 * which it reads: `pruneEntities`, `forceEntityTypeSchema`). The engine's configuration holds them.
 */
export type KindSettings = UnionToIntersection<SettingsOf<Extract<Registered, { configure: unknown }>>>;

const entries = Object.entries(REGISTRY) as [string, Registered][];
for (const [name, kind] of entries) {
  if (kind.kind !== name) throw new Error(`the registry lists kind \`${kind.kind}\` under \`${name}\``);
}
const registered: readonly Registered[] = entries.map(([, kind]) => kind);

/** Every managed kind with its default settings, in apply order. */
export const KIND_HANDLERS: readonly AnyKindHandler[] = applyOrder(
  registered.filter((k): k is Exclude<Registered, AnyReadOnlyKind> => !isReadOnly(k)),
);

/** The managed kinds' names, in apply order (the JSON plan's `kind`, `export --kinds`). */
export const KIND_NAMES: readonly ManagedKindName[] = KIND_HANDLERS.map((h) => h.kind as ManagedKindName);

/** The kinds that are only read (references to them are checked against the workspace). */
export const READ_ONLY_KINDS: readonly AnyReadOnlyKind[] = registered.filter(
  (k): k is Extract<Registered, AnyReadOnlyKind> => isReadOnly(k),
);

/** Every managed kind configured with the run's settings, in apply order. */
export const kindsFor = (settings: KindSettings): readonly AnyKindHandler[] =>
  KIND_HANDLERS.map((handler) => {
    const kind = handler as Registered;
    return 'configure' in kind ? kind.configure(settings) : handler;
  });

/** The managed kinds plus `extra` (a kind registered elsewhere, e.g. by a test), in apply order. */
export const kindsWith = (extra: readonly AnyKindHandler[], base: readonly AnyKindHandler[] = KIND_HANDLERS) =>
  applyOrder([...base, ...extra]);

export const handlerFor = (kind: string): AnyKindHandler => {
  const handler = KIND_HANDLERS.find((h) => h.kind === kind);
  if (!handler) throw new Error(`no handler registered for kind ${kind}`);
  return handler;
};
