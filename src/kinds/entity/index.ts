/**
 * The `entity` kind: the pure half (`model.ts`) and the IO half — bulk reads (`live.ts`),
 * descriptor writes (`apply.ts`) and the API's violations located in the manifest.
 */
import { isApiError } from '../../core/errors.js';
import type { Diagnostic } from '../../core/model.js';
import type { KindHandler } from '../types.js';
import { applyEntityChange, descriptorTextFor } from './apply.js';
import { type EntityLive, fetchArchivedHolders, fetchEntityLive } from './live.js';
import { createEntityModel, type EntitySettings } from './model.js';
import type { EntityDescriptor } from './schema.js';
import { violationDiagnostics } from './violations.js';

export type { EntityLive } from './live.js';
export type { EntitySettings } from './model.js';
export { OWNERSHIP_METADATA_KEY } from './ownership.js';

/** Builds the `entity` kind with its settings. */
export const createEntityKind = (
  settings: Partial<EntitySettings> = {},
): KindHandler<EntityDescriptor, EntityLive> => ({
  ...createEntityModel({ pruneAction: settings.pruneAction ?? 'archive' }),
  fetchLive: fetchEntityLive,
  fetchHolders: fetchArchivedHolders,
  apply: applyEntityChange,
  explainFailure: (change, error: Error): Diagnostic[] => {
    if (!isApiError(error) || error.body === undefined) return [];
    // Line numbers of the text that was sent do not depend on the source id.
    return violationDiagnostics(change, error.body, descriptorTextFor(change, 'cortex-sync'));
  },
});

/** The `entity` kind with default settings. */
export const entityKind = createEntityKind();
