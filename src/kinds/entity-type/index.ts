/**
 * The `entity-type` kind: custom entity types (`/api/v1/catalog/definitions`), one per document
 * under `.cortex/entity-types/`, identified by `type`.
 */

import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { sortKeys } from '../../core/diff.js';
import { ApiError, CortexSyncError, isApiError } from '../../core/errors.js';
import type { Change, DesiredObject, JsonObject, JsonValue, LiveObject, ParsedDocument } from '../../core/model.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import type { ApplyContext, FetchContext, KindHandler, ParseResult } from '../types.js';
import {
  type EntityTypeManifest,
  entityTypeManifestSchema,
  type LiveDefinition,
  type LiveEntityType,
  liveDefinitionSchema,
} from './schema.js';

const KIND = 'entity-type';
const DEFINITIONS_PATH = '/api/v1/catalog/definitions';

/** Icons the server shows when none was set or the one sent was unknown to it. */
export const SERVER_DEFAULT_ICON_TAGS: readonly string[] = ['Cortex-builtin::Box'];

const isServerDefaultIcon = (iconTag: string | null | undefined): boolean =>
  !iconTag || SERVER_DEFAULT_ICON_TAGS.includes(iconTag);

const nonEmpty = (s: string | null | undefined): string | undefined => (s ? s : undefined);

const canonical = (fields: {
  type: string;
  name: string | undefined;
  description: string | undefined;
  schema: unknown;
  iconTag: string | undefined;
}): JsonValue => {
  const out: JsonObject = { type: fields.type };
  if (fields.name !== undefined) out.name = fields.name;
  if (fields.description !== undefined) out.description = fields.description;
  out.schema = sortKeys(fields.schema ?? {});
  if (fields.iconTag !== undefined) out.iconTag = fields.iconTag;
  return out;
};

const idOf = (value: unknown): string | undefined => {
  const type = (value as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type !== '' ? type : undefined;
};

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
const changesCustomSchema = (change: Change): boolean => {
  const desired = (change.desired?.spec as EntityTypeManifest | undefined)?.schema;
  const live = (change.live?.state as LiveEntityType | undefined)?.definition;
  if (live?.source === 'CORTEX') return false;
  return JSON.stringify(sortKeys(desired ?? {})) !== JSON.stringify(sortKeys(live?.schema ?? {}));
};

const desiredSpec = (change: Change): EntityTypeManifest => {
  const spec = change.desired?.spec as EntityTypeManifest | undefined;
  if (!spec)
    throw new CortexSyncError('INTERNAL', `${change.action} entity type \`${change.id}\`: the change has no manifest`);
  return spec;
};

const applyChange = async (change: Change, client: ApiClient, force: boolean): Promise<void> => {
  const path = `${DEFINITIONS_PATH}/${encodePathSegment(change.id)}`;
  switch (change.action) {
    case 'create':
      await client.request({
        operation: `create entity type \`${change.id}\``,
        method: 'POST',
        path: DEFINITIONS_PATH,
        body: payloadOf(desiredSpec(change), true),
      });
      return;
    case 'update':
      try {
        await client.request({
          operation: `update entity type \`${change.id}\``,
          method: 'PUT',
          path,
          query: force ? { force: true } : undefined,
          body: payloadOf(desiredSpec(change), false),
        });
      } catch (error) {
        if (!force && isApiError(error) && error.status === 400 && changesCustomSchema(change))
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

/** Reads every entity type, built-ins included so references to `rds`, `s3`, … resolve. */
const fetchLive = async (ctx: FetchContext): Promise<LiveObject<LiveEntityType>[]> => {
  const items = await ctx.client.paginate<unknown>(
    { operation: 'list entity types', method: 'GET', path: DEFINITIONS_PATH, query: { includeBuiltIn: true } },
    'definitions',
  );
  const declaredIcons = new Map<string, string | undefined>();
  for (const obj of ctx.desired) declaredIcons.set(obj.id, (obj.spec as EntityTypeManifest).iconTag);
  return items.map((item, index) => {
    const parsed = liveDefinitionSchema.safeParse(item);
    if (!parsed.success) {
      throw new CortexSyncError(
        'API',
        `list entity types: item ${index} of the response is not an entity type (${parsed.error.issues[0]?.message ?? 'invalid'})`,
      );
    }
    const definition: LiveDefinition = parsed.data;
    const declared = declaredIcons.get(definition.type);
    const comparedIconTag =
      declared === undefined
        ? undefined
        : isServerDefaultIcon(definition.iconTag)
          ? declared
          : (definition.iconTag ?? undefined);
    const builtIn = definition.source === 'CORTEX';
    return {
      kind: KIND,
      id: definition.type,
      // Cortex's own types (source CORTEX) are visible for reference checks but never pruned.
      ...(builtIn ? { protected: true } : {}),
      state: { definition, ...(comparedIconTag !== undefined ? { comparedIconTag } : {}) },
    };
  });
};

/** The `entity-type` kind handler. */
export const entityTypeKind: KindHandler<EntityTypeManifest, LiveEntityType> = {
  kind: KIND,
  title: 'entity type',
  manifestSchema: entityTypeManifestSchema,
  ownsFile: (relPath) => relPath.startsWith('.cortex/entity-types/') && /\.(ya?ml|json)$/i.test(relPath),
  parse(doc: ParsedDocument): ParseResult<EntityTypeManifest> {
    const result = entityTypeManifestSchema.safeParse(doc.value);
    const id = idOf(doc.value);
    if (!result.success) {
      return {
        objects: [],
        diagnostics: zodIssuesToDiagnostics(result.error.issues, doc, { kind: KIND, ...(id ? { id } : {}) }),
      };
    }
    return {
      objects: [
        {
          kind: KIND,
          id: result.data.type,
          source: { file: doc.file, line: doc.line, column: doc.column },
          spec: result.data,
          doc,
        },
      ],
      diagnostics: [],
    };
  },
  references: () => [],
  fetchLive,
  desiredState: (obj: DesiredObject<EntityTypeManifest>) =>
    canonical({
      type: obj.spec.type,
      name: obj.spec.name,
      description: nonEmpty(obj.spec.description),
      schema: obj.spec.schema,
      iconTag: obj.spec.iconTag,
    }),
  liveState: (obj: LiveObject<LiveEntityType>) =>
    canonical({
      type: obj.state.definition.type,
      name: nonEmpty(obj.state.definition.name),
      description: nonEmpty(obj.state.definition.description),
      schema: obj.state.definition.schema,
      iconTag: obj.state.comparedIconTag,
    }),
  pruneAction: 'delete',
  apply: (change: Change, ctx: ApplyContext) => applyChange(change, ctx.client, ctx.options.forceEntityTypeSchema),
};
