/**
 * Reads the live workspace for `export`: the same bulk reads as `plan` (`fetchLiveState`), plus
 * what a plan never needs:
 *
 * - the API-managed dependency edges of every entity (the API has no bulk read of edges: one
 *   paged request per caller), read through the dependency kind in chunks so progress and an
 *   estimate from the rate budget can be shown; edges a caller's descriptor declares
 *   (`x-cortex-dependency`) stay with the descriptor and are left out;
 * - archived entities, when asked for (the descriptor list leaves them out): the catalog list
 *   with `includeArchived`, then one descriptor read per archived entity.
 *
 * Only GET requests.
 */
import { encodePathSegment } from '../api/types.js';
import { InterruptedError } from '../core/errors.js';
import { countOf } from '../core/plural.js';
import {
  type DesiredObject,
  type Diagnostic,
  type JsonObject,
  type KindName,
  type LiveObject,
  objectKey,
} from '../core/model.js';
import type { EngineContext } from '../engine/context.js';
import { fetchLiveState } from '../engine/fetch-live.js';
import { INVENTORY_ENTITY_TYPE } from '../kinds/entity/records/inventory.js';
import { descriptorEdgeKeys, edgeKeyOf } from '../kinds/dependency/to-manifest.js';
import type { LiveDependency } from '../kinds/dependency/schema.js';
import { readOwnershipMarker } from '../kinds/entity/ownership.js';
import type { EntityLive } from '../kinds/entity/live.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { BUILT_IN_ENTITY_TYPES } from '../kinds/shared/built-in-entity-types.js';

/** Callers whose edges are read between two progress reports. */
export const CALLERS_PER_CHUNK = 50;

export interface ExportReadInput {
  handlers: readonly AnyKindHandler[];
  /** The kinds to export. */
  kinds: ReadonlySet<KindName>;
  includeArchived: boolean;
  /** Whose inventory counts as ours when several claim an object (undefined: none). */
  sourceId: string | undefined;
  /** The client's budget, for the estimate of the per-caller reads. */
  requestsPerMinute: number;
  /** Progress for a person (stderr); several lines for a long read. */
  progress: (line: string) => void;
}

export interface ExportLive {
  live: LiveObject[];
  diagnostics: Diagnostic[];
  /** Each source's origin as its ownership record has it (the repository that first applied it). */
  recordedOrigins: ReadonlyMap<string, string>;
}

const handlerOf = (handlers: readonly AnyKindHandler[], kind: KindName): AnyKindHandler | undefined =>
  handlers.find((h) => h.kind === kind);

/** "about 3 min", "about 40 s", "a few seconds". */
export const formatDuration = (ms: number): string => {
  if (ms < 5_000) return 'a few seconds';
  if (ms < 90_000) return `about ${Math.round(ms / 1000)} s`;
  return `about ${Math.round(ms / 60_000)} min`;
};

/**
 * How long `requests` reads take at `requestsPerMinute`: the client sends a quarter of a minute's
 * budget back to back, then spaces requests at the rate.
 */
export const estimateReadMs = (requests: number, requestsPerMinute: number): number => {
  const burst = Math.max(1, Math.floor(requestsPerMinute / 4));
  return (Math.max(0, requests - burst) / requestsPerMinute) * 60_000;
};

/** A stand-in declaration of a caller, so the dependency kind reads that caller's edges. */
const callerStub = (callerTag: string): DesiredObject => ({
  kind: 'dependency',
  id: `${callerTag}→`,
  source: { file: '', line: 1, column: 1 },
  spec: { callerTag, calleeTag: '', index: 0 },
  doc: { file: '', index: 0, line: 1, column: 1, value: null, locate: () => ({ line: 1, column: 1 }) },
});

const readEdges = async (
  input: ExportReadInput,
  ctx: EngineContext,
  dependencyHandler: AnyKindHandler,
  entities: readonly LiveObject[],
  readBefore: readonly LiveObject[],
): Promise<LiveObject[]> => {
  const callers = entities.map((e) => e.id).sort();
  const started = ctx.clock.now();
  input.progress(
    `Reading the dependency edges of ${countOf(callers.length, 'entity')}: one request each (the API has no bulk read of edges), ` +
      `${formatDuration(estimateReadMs(callers.length, input.requestsPerMinute))} at ${input.requestsPerMinute} requests/minute. ` +
      'Leave them out with --kinds.',
  );
  const declared = new Map(
    entities.map((e) => [e.id, descriptorEdgeKeys((e.state as EntityLive | undefined)?.descriptor ?? null)]),
  );
  const edges: LiveObject[] = [];
  let lastReport = started;
  for (let i = 0; i < callers.length; i += CALLERS_PER_CHUNK) {
    // A stop request ends the reads between two chunks; nothing has been written yet.
    if (ctx.signal.aborted) throw new InterruptedError();
    const chunk = callers.slice(i, i + CALLERS_PER_CHUNK);
    const live = await dependencyHandler.fetchLive({
      client: ctx.client,
      desired: chunk.map(callerStub),
      managedIds: [],
      readBefore,
    });
    for (const edge of live) {
      const state = edge.state as LiveDependency;
      if (declared.get(state.callerTag)?.has(edgeKeyOf(state.calleeTag, state.method, state.path))) continue;
      edges.push(edge);
    }
    const now = ctx.clock.now();
    const done = Math.min(i + CALLERS_PER_CHUNK, callers.length);
    if (now - lastReport >= 2_000 && done < callers.length) {
      lastReport = now;
      const left = ((now - started) / done) * (callers.length - done);
      input.progress(`  dependency edges: ${done}/${callers.length} callers read, ${formatDuration(left)} left`);
    }
  }
  return edges;
};

interface CatalogSummary {
  tag?: unknown;
  isArchived?: unknown;
}

/** Archived entities with their descriptors: the catalog list with `includeArchived`, then one read each. */
const readArchivedEntities = async (
  ctx: EngineContext,
  types: readonly string[],
  known: ReadonlySet<string>,
): Promise<LiveObject<EntityLive>[]> => {
  const items = await ctx.client.paginate<CatalogSummary>(
    {
      operation: 'list entities including archived',
      method: 'GET',
      path: '/api/v1/catalog',
      query: { types, includeArchived: true, pageSize: 1000 },
    },
    'entities',
  );
  const tags = items
    .filter((s) => s.isArchived === true && typeof s.tag === 'string' && !known.has(s.tag))
    .map((s) => s.tag as string);
  const out: LiveObject<EntityLive>[] = [];
  for (const tag of tags) {
    const res = await ctx.client.request<unknown>({
      operation: `read entity descriptor ${tag}`,
      method: 'GET',
      path: `/api/v1/catalog/${encodePathSegment(tag)}/openapi`,
      query: { yaml: false },
      acceptStatus: [404],
    });
    const descriptor = res.body;
    if (res.status === 404 || descriptor === null || typeof descriptor !== 'object' || Array.isArray(descriptor)) {
      continue;
    }
    const marker = readOwnershipMarker(descriptor);
    out.push({
      kind: 'entity',
      id: tag,
      archived: true,
      ...(marker ? { owner: marker.source } : {}),
      state: { descriptor: descriptor as JsonObject },
    });
  }
  return out;
};

/** Reads what `export` writes (see the module comment). */
export const readWorkspaceForExport = async (input: ExportReadInput, ctx: EngineContext): Promise<ExportLive> => {
  const { kinds, handlers } = input;
  // Entity types are always read (entity lists filter by type name); entities too when edges are
  // exported (every entity is a possible caller, and its descriptor says which edges are its own).
  const read = new Set<KindName>([...kinds, 'entity-type']);
  if (kinds.has('dependency')) read.add('entity');
  read.delete('dependency');
  const state = await fetchLiveState({
    client: ctx.client,
    handlers: handlers.filter((h) => read.has(h.kind)),
    recordKinds: new Set(handlers.map((h) => h.kind)),
    desired: [],
    sourceId: input.sourceId,
  });
  const live = [...state.live];

  if (input.includeArchived && kinds.has('entity')) {
    const types = [
      ...new Set([...BUILT_IN_ENTITY_TYPES, ...live.filter((o) => o.kind === 'entity-type').map((o) => o.id)]),
    ].filter((t) => t !== INVENTORY_ENTITY_TYPE);
    const known = new Set(live.filter((o) => o.kind === 'entity').map((o) => o.id));
    live.push(...(await readArchivedEntities(ctx, types, known)));
  }

  const dependencyHandler = handlerOf(handlers, 'dependency');
  if (kinds.has('dependency') && dependencyHandler) {
    const entities = live.filter((o) => o.kind === 'entity' && !o.archived);
    const readBefore = live.filter((o) => o.kind === 'entity-type');
    const edges = await readEdges(input, ctx, dependencyHandler, entities, readBefore);
    for (const edge of edges) {
      const owner = state.inventories.ownerOf.get(objectKey('dependency', edge.id));
      if (owner !== undefined) edge.owner = owner;
      else delete edge.owner;
    }
    live.push(...edges);
  }
  const recordedOrigins = new Map<string, string>();
  for (const [source, meta] of state.inventories.meta)
    if (meta.origin !== undefined) recordedOrigins.set(source, meta.origin);
  return { live, diagnostics: state.diagnostics, recordedOrigins };
};
