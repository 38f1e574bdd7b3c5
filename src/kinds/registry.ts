/**
 * Every kind cortex-sync manages, in the order the engine reads them. Adding a kind is a folder
 * plus one line here. Kind-specific settings are not part of the shared contract: each kind's
 * factory takes its own, and `createKindHandlers` maps them by kind name.
 */
import type { KindName } from '../core/model.js';
import { catalogPageKind } from './catalog-page/index.js';
import { dependencyKind } from './dependency/index.js';
import { createEntityKind, type EntitySettings } from './entity/index.js';
import { createEntityTypeKind, type EntityTypeSettings } from './entity-type/index.js';
import { initiativeKind } from './initiative/index.js';
import { scaffolderTemplateKind } from './scaffolder-template/index.js';
import type { AnyKindHandler } from './types.js';

/** The settings of the kinds that have any, by kind name; a kind left out keeps its defaults. */
export interface KindSettings {
  'entity-type'?: Partial<EntityTypeSettings>;
  entity?: Partial<EntitySettings>;
}

/** Every kind, built with `settings`, in read order. */
export const createKindHandlers = (settings: KindSettings = {}): readonly AnyKindHandler[] => [
  createEntityTypeKind(settings['entity-type']),
  createEntityKind(settings.entity),
  dependencyKind,
  catalogPageKind,
  initiativeKind,
  scaffolderTemplateKind,
];

/** Every kind with its default settings. */
export const KIND_HANDLERS: readonly AnyKindHandler[] = createKindHandlers();

export const handlerFor = (kind: KindName): AnyKindHandler => {
  const handler = KIND_HANDLERS.find((h) => h.kind === kind);
  if (!handler) throw new Error(`no handler registered for kind ${kind}`);
  return handler;
};
