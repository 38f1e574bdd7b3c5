/**
 * The `entity-type` kind: the pure half (`model.ts`) and the IO half against
 * `/api/v1/catalog/definitions`.
 */
import { encodePathSegment } from '../../api/types.js';
import { sortKeys } from '../../core/diff.js';
import { ApiError, CortexSyncError, isApiError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import { ENTITY_TYPE_SETTINGS } from './settings.js';
import { readEachOnce, readOneOrAbsent, readPagedList } from '../shared/api-reads.js';
import type { ApplyContext, ConfigurableKind, FetchContext, KindChange, KindHandler } from '../types.js';
import { entityTypeModel, KIND } from './model.js';
import { type EntityTypeManifest, type LiveEntityType, liveDefinitionSchema } from './schema.js';

const DEFINITIONS_PATH = '/api/v1/catalog/definitions';

/** Settings of the `entity-type` kind. */
export interface EntityTypeSettings {
  /** Send schema changes with the API's `force=true`, even when they break existing entities. */
  forceSchema: boolean;
}

type EntityTypeChange = KindChange<EntityTypeManifest, LiveEntityType>;

/** The request body of a create (`withType`) or an update (PUT takes the type in the path only). */
const payloadOf = (spec: EntityTypeManifest, withType: boolean): Record<string, unknown> => ({
  ...(withType ? { type: spec.type } : {}),
  name: spec.name,
  ...(spec.description !== undefined ? { description: spec.description } : {}),
  schema: spec.schema,
  ...(spec.iconTag !== undefined ? { iconTag: spec.iconTag } : {}),
});

const FORCE_HINT =
  'if the new schema breaks existing entities of this type, pass --force-entity-type-schema to apply it anyway';

/** Adds the `--force-entity-type-schema` hint to a refused schema change. */
const withForceHint = (error: ApiError): ApiError =>
  new ApiError(
    'API',
    {
      operation: error.operation,
      method: error.method,
      path: error.path,
      status: error.status,
      apiMessage: error.apiMessage ? `${error.apiMessage} (${FORCE_HINT})` : FORCE_HINT,
      body: error.body,
      attempts: error.attempts,
      durationMs: error.durationMs,
      requestId: error.requestId,
    },
    { cause: error },
  );

/** Does this update change the schema of a workspace type (the only refusal `force` can override)? */
const changesCustomSchema = (desired: EntityTypeManifest, live: LiveEntityType): boolean => {
  if (live.definition.source === 'CORTEX') return false;
  return JSON.stringify(sortKeys(desired.schema)) !== JSON.stringify(sortKeys(live.definition.schema ?? {}));
};

const applyChange = async (
  change: EntityTypeChange,
  ctx: ApplyContext,
  settings: EntityTypeSettings,
): Promise<void> => {
  const { client } = ctx;
  const path = `${DEFINITIONS_PATH}/${encodePathSegment(change.id)}`;
  switch (change.action) {
    case 'create':
      await client.request({
        operation: `create entity type \`${change.id}\``,
        method: 'POST',
        path: DEFINITIONS_PATH,
        body: payloadOf(change.desired.spec, true),
      });
      return;
    case 'update':
      try {
        await client.request({
          operation: `update entity type \`${change.id}\``,
          method: 'PUT',
          path,
          query: settings.forceSchema ? { force: true } : undefined,
          body: payloadOf(change.desired.spec, false),
        });
      } catch (error) {
        const refused = isApiError(error) && error.status === 400;
        if (!settings.forceSchema && refused && changesCustomSchema(change.desired.spec, change.live.state))
          throw withForceHint(error);
        throw error;
      }
      return;
    case 'delete':
      // Already gone is the state we want.
      await client.request({
        operation: `delete entity type \`${change.id}\``,
        method: 'DELETE',
        path,
        acceptStatus: [404],
      });
      return;
    case 'noop':
      return;
    case 'archive':
      throw new CortexSyncError('INTERNAL', `entity types cannot be archived (\`${change.id}\`)`);
  }
};

/** One entity type as read. */
const liveOf = (definition: LiveEntityType['definition']): LiveObject<LiveEntityType> => ({
  kind: KIND,
  id: definition.type,
  // Cortex's own types (source CORTEX) are visible for reference checks but never pruned.
  ...(definition.source === 'CORTEX' ? { protected: true } : {}),
  state: { definition },
});

/** Reads every entity type, built-ins included so references to `rds`, `s3`, … resolve. */
const fetchLive = async (ctx: FetchContext<EntityTypeManifest>): Promise<LiveObject<LiveEntityType>[]> => {
  const definitions = await readPagedList(ctx.client, {
    request: { operation: 'list entity types', method: 'GET', path: DEFINITIONS_PATH, query: { includeBuiltIn: true } },
    list: 'definitions',
    item: liveDefinitionSchema,
    itemName: 'an entity type',
  });
  return definitions.map(liveOf);
};

/** The entity types with these names, one `GET /catalog/definitions/{type}` each (404: none). */
const fetchByIds = async (
  ids: readonly string[],
  ctx: FetchContext<EntityTypeManifest>,
): Promise<LiveObject<LiveEntityType>[]> => {
  return readEachOnce(ids, async (type) => {
    const definition = await readOneOrAbsent(ctx.client, {
      request: {
        operation: `read entity type \`${type}\``,
        method: 'GET',
        path: `${DEFINITIONS_PATH}/${encodePathSegment(type)}`,
      },
      item: liveDefinitionSchema,
      itemName: 'an entity type',
    });
    return definition?.type === type ? liveOf(definition) : undefined;
  });
};

/** Builds the `entity-type` kind with its settings. */
export const createEntityTypeKind = (
  settings: Partial<EntityTypeSettings> = {},
): KindHandler<EntityTypeManifest, LiveEntityType> => {
  const resolved: EntityTypeSettings = { forceSchema: settings.forceSchema ?? false };
  return {
    ...entityTypeModel,
    live: { ...entityTypeModel.live, fetch: fetchLive, fetchByIds },
    write: { ...entityTypeModel.write, apply: (change, ctx) => applyChange(change, ctx, resolved) },
  };
};

/** What the `entity-type` kind reads from the run's configuration: `--force-entity-type-schema`. */
export interface EntityTypeRunSettings {
  forceEntityTypeSchema?: boolean;
}

/** The `entity-type` kind with default settings; `configure` applies the run's. */
export const entityTypeKind: ConfigurableKind<EntityTypeManifest, LiveEntityType, EntityTypeRunSettings> = {
  ...createEntityTypeKind(),
  settings: ENTITY_TYPE_SETTINGS,
  configure: (settings) =>
    createEntityTypeKind({
      ...(settings.forceEntityTypeSchema !== undefined ? { forceSchema: settings.forceEntityTypeSchema } : {}),
    }),
};
