/** Shared set-up of the entity tests: manifests parsed as the loader does, an emulator and a client. */
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { DesiredObject, Diagnostic, LiveObject } from '../../../src/core/model.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { type EntityLive, entityKind } from '../../../src/kinds/entity/index.js';
import type { EntityDescriptor } from '../../../src/kinds/entity/schema.js';
import type { ApplyContext, FetchContext, KindChange } from '../../../src/kinds/types.js';
import { type ChangeExtras, removalOf, writeOf } from '../kind-change.js';
import { parseManifestFile } from '../../../src/source/yaml.js';
import { AT } from '../parse-context.js';

export const SOURCE_ID = 'github.com/acme/catalog';

export type DesiredEntity = DesiredObject<EntityDescriptor>;
export type LiveEntity = LiveObject<EntityLive>;

/** Parses a manifest file's text through the YAML loader and the entity kind, as `validate` does. */
export const parseEntities = (
  text: string,
  file = 'cortex.yaml',
): { objects: DesiredEntity[]; diagnostics: Diagnostic[] } => {
  const parsed = parseManifestFile(file, text);
  const objects: DesiredEntity[] = [];
  const diagnostics = [...parsed.diagnostics];
  for (const doc of parsed.documents) {
    const result = entityKind.manifest.parse(doc, AT);
    objects.push(...result.objects);
    diagnostics.push(...result.diagnostics);
  }
  return { objects, diagnostics };
};

/** The one entity of a manifest that must be valid. */
export const entity = (text: string, file = 'cortex.yaml'): DesiredEntity => {
  const { objects, diagnostics } = parseEntities(text, file);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || objects.length !== 1) {
    throw new Error(`test manifest is not one valid entity: ${JSON.stringify(errors)}`);
  }
  return objects[0] as DesiredEntity;
};

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  /** API requests the emulator served since the last `mark()`. */
  requestsSinceMark(): RunningEmulator['requests'];
  mark(): void;
  stop(): Promise<void>;
}

/** An emulator without rate limiting and a real HTTP client that never sleeps. */
export const startHarness = async (options: Parameters<typeof startEmulator>[0] = {}): Promise<Harness> => {
  const emulator = await startEmulator({ rateLimitPerMinute: 0, ...options });
  const client = createApiClient({
    baseUrl: emulator.url,
    apiKey: emulator.apiKey,
    requestsPerMinute: 1_000_000,
    burst: 1000,
    sleep: async () => {},
  });
  let mark = 0;
  return {
    emulator,
    client,
    mark: () => {
      mark = emulator.requests.length;
    },
    requestsSinceMark: () => emulator.requests.slice(mark),
    stop: () => emulator.stop(),
  };
};

/** What the entity kind reads with: the entity types named in `entityTypes` as read before it. */
export const fetchContext = (
  client: ApiClient,
  desired: readonly DesiredEntity[],
  entityTypes: readonly string[] = ['service', 'domain', 'team'],
): FetchContext<EntityDescriptor> => ({
  client,
  desired,
  managedIds: [],
  readBefore: entityTypes.map((type) => ({ kind: 'entity-type', id: type, state: {} })),
});

export const applyContext = (client: ApiClient, warnings: Diagnostic[] = []): ApplyContext => ({
  client,
  options: { sourceId: SOURCE_ID },
  warn: (diagnostics) => warnings.push(...diagnostics),
});

/** A create/update change as the planner makes it. */
export const writeChange = (
  desired: DesiredEntity,
  live?: LiveEntity,
  extra: ChangeExtras = {},
): KindChange<EntityDescriptor, EntityLive> => writeOf(desired, live, extra);

/** An archive or delete of the entity `tag`, as prune plans it (the live object as read). */
export const removeChange = (tag: string, action: 'archive' | 'delete'): KindChange<EntityDescriptor, EntityLive> =>
  removalOf({ kind: 'entity', id: tag, state: { descriptor: null } }, action);

export const liveById = (live: readonly LiveEntity[], id: string): LiveEntity | undefined =>
  live.find((l) => l.id === id);

/** Creates a custom entity type through the emulator's definitions endpoint (unless it exists, e.g. built-in `s3`). */
export const createEntityType = async (client: ApiClient, type: string): Promise<void> => {
  const existing = await client.request({
    operation: `read entity type ${type}`,
    method: 'GET',
    path: `/api/v1/catalog/definitions/${encodeURIComponent(type)}`,
    acceptStatus: [404],
  });
  if (existing.status !== 404) return;
  await client.request({
    operation: `create entity type ${type}`,
    method: 'POST',
    path: '/api/v1/catalog/definitions',
    body: { type, name: type, schema: { type: 'object' } },
  });
};
