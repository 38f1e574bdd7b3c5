/**
 * The `entity` kind: the pure half (`model.ts`) and the IO half — bulk reads (`live.ts`),
 * descriptor writes (`apply.ts`) and the API's violations located in the manifest.
 */
import { isApiError } from '../../core/errors.js';
import type { Diagnostic } from '../../core/model.js';
import type { ConfigurableKind, KindHandler } from '../types.js';
import { applyEntityChange, descriptorTextFor, descriptorYaml } from './apply.js';
import { applyMergedEntityChange, mergePatchFor } from './merge-apply.js';
import { exportEntities } from './export.js';
import { fetchMergeEntitiesByTag, fetchMergeEntityLive } from './merge-live.js';
import { type EntityLive, fetchArchivedHolders, fetchEntitiesByTag, fetchEntityLive } from './live.js';
import type { PruneAction } from '../../core/kind-contract.js';
import { ENTITY_SETTINGS } from './settings.js';
import { createEntityModel, type EntitySettings, type EntityWrites } from './model.js';
import type { EntityDescriptor } from './schema.js';
import { violationDiagnostics } from './violations.js';

export type { EntityLive } from './live.js';
export type { EntitySettings } from './model.js';
export { OWNERSHIP_METADATA_KEY } from './ownership.js';

/** The `entity` kind's handler, with its own name for its `manifest.typedBy.typeOf`. */
export type EntityKind = KindHandler<EntityDescriptor, EntityLive> & ReturnType<typeof createEntityModel>;

/** Builds the `entity` kind with its settings. */
export const createEntityKind = (settings: Partial<EntitySettings> = {}): EntityKind => {
  const merge = settings.entityWrites === 'merge';
  const model = createEntityModel({
    pruneAction: settings.pruneAction ?? 'archive',
    ...(merge ? { entityWrites: 'merge' } : {}),
  });
  return {
    ...model,
    live: {
      ...model.live,
      // Entity lists filter by type name: entity types are read first.
      uses: ['entity-type'],
      // Merge mode reads the descriptors of archived declared entities too (`merge-live.ts`).
      fetch: merge ? fetchMergeEntityLive : fetchEntityLive,
      fetchByIds: merge ? fetchMergeEntitiesByTag : fetchEntitiesByTag,
      // Desired entities the descriptor list did not show are looked up by tag, or in the list with archived ones.
      readsMissingDesired: true,
    },
    write: {
      ...model.write,
      apply: merge ? applyMergedEntityChange : applyEntityChange,
      explainFailure: (change, error: Error): Diagnostic[] => {
        if (!isApiError(error) || error.body === undefined) return [];
        // Line numbers of the text that was sent do not depend on the source id (nor on the delete marker's random part).
        const text =
          merge && (change.action === 'create' || change.action === 'update')
            ? descriptorYaml(mergePatchFor(change, 'cortex-sync').body)
            : descriptorTextFor(change, 'cortex-sync');
        return violationDiagnostics(change, error.body, text);
      },
    },
    prune: { ...model.prune, fetchHolders: fetchArchivedHolders },
    export: { ...model.export, read: exportEntities },
  };
};

/**
 * What the `entity` kind reads from the run's configuration: what prune does to an entity
 * (`--prune-entities`) and how entities are written (`--entity-writes`). `forceConflicts` is read
 * by the planner (it judges key conflicts between sources); it is listed here with its setting.
 */
export interface EntityRunSettings {
  pruneEntities?: PruneAction;
  entityWrites?: EntityWrites;
  forceConflicts?: boolean;
}

/** The `entity` kind with default settings; `configure` applies the run's. */
export const entityKind: EntityKind & ConfigurableKind<EntityDescriptor, EntityLive, EntityRunSettings> = {
  ...createEntityKind(),
  settings: ENTITY_SETTINGS,
  configure: (settings) =>
    createEntityKind({
      ...(settings.pruneEntities ? { pruneAction: settings.pruneEntities } : {}),
      ...(settings.entityWrites ? { entityWrites: settings.entityWrites } : {}),
    }),
};
