/**
 * Every kind cortex-sync manages, in the order the engine reads them. Adding a kind is a folder
 * plus one line here.
 */
import type { KindName } from '../core/model.js';
import { catalogPageKind } from './catalog-page/index.js';
import { dependencyKind } from './dependency/index.js';
import { entityKind } from './entity/index.js';
import { entityTypeKind } from './entity-type/index.js';
import { initiativeKind } from './initiative/index.js';
import { scaffolderTemplateKind } from './scaffolder-template/index.js';
import type { AnyKindHandler } from './types.js';

export const KIND_HANDLERS: readonly AnyKindHandler[] = [
  entityTypeKind,
  entityKind,
  dependencyKind,
  catalogPageKind,
  initiativeKind,
  scaffolderTemplateKind,
];

export const handlerFor = (kind: KindName): AnyKindHandler => {
  const handler = KIND_HANDLERS.find((h) => h.kind === kind);
  if (!handler) throw new Error(`no handler registered for kind ${kind}`);
  return handler;
};
