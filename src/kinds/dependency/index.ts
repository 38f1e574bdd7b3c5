/**
 * The `dependency` kind: API-managed dependency edges. One document under `.cortex/dependencies/`
 * names a caller and its edges; each edge is one object, applied with the bulk endpoints.
 */
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { type ApiError, CortexSyncError, isApiError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import { readPagedList } from '../shared/api-reads.js';
import type { ApplyContext, BatchOutcome, FetchContext, KindChange, KindHandler } from '../types.js';
import { BULK_BODY_LIMIT_BYTES, type BulkEntry, sendBulk } from './bulk.js';
import { dependencyId, parseDependencyId } from './edges.js';
import { exportEdges } from './export.js';
import { dependencyModel, KIND, liveKey } from './model.js';
import { type DependencySpec, type LiveDependency, liveDependencySchema } from './schema.js';

type DependencyChange = KindChange<DependencySpec, LiveDependency>;
/** Callers read at once (each read is one or a few GETs). */
const READ_CONCURRENCY = 8;

/**
 * Every outgoing edge of `callerTag`: none when the caller entity does not exist yet (a 404), or,
 * with `acceptMissing` false, the 404 thrown as the `ApiError` it is.
 */
const readCallerEdges = async (
  client: ApiClient,
  callerTag: string,
  acceptMissing = true,
): Promise<LiveDependency[]> => {
  const edges = await readPagedList(client, {
    request: {
      operation: `list dependencies of \`${callerTag}\``,
      method: 'GET',
      path: `/api/v1/catalog/${encodePathSegment(callerTag)}/dependencies`,
      query: { includeOutgoing: true, includeIncoming: false },
      ...(acceptMissing ? { acceptStatus: [404] } : {}),
    },
    list: 'dependencies',
    item: liveDependencySchema,
    itemName: 'a dependency',
  });
  return edges.filter((edge) => edge.callerTag === callerTag);
};

const mapWithConcurrency = async <T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> => {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

/**
 * The outgoing edges of `callers`, one paged read per caller, a few callers at once. A caller the
 * API answers 404 for has none, or, given `onMissing`, is told to it with the error (and has none).
 */
const readEdgesOf = async (
  ctx: Pick<FetchContext<DependencySpec>, 'client'>,
  callers: readonly string[],
  onMissing?: (caller: string, error: ApiError) => void,
): Promise<LiveObject<LiveDependency>[]> => {
  const perCaller = await mapWithConcurrency(callers, READ_CONCURRENCY, async (caller) => {
    if (onMissing === undefined) return readCallerEdges(ctx.client, caller);
    try {
      return await readCallerEdges(ctx.client, caller, false);
    } catch (error) {
      if (!isApiError(error) || error.status !== 404) throw error;
      onMissing(caller, error);
      return [];
    }
  });
  return perCaller.flat().map((edge) => ({ kind: KIND, id: dependencyId(liveKey(edge)), state: edge }));
};

/**
 * Reads the outgoing edges of the callers this repository declares or manages, one paged read
 * per caller (the API has no read of all edges). Edges a descriptor declares look the same; the
 * ownership inventory, not this read, says which edges are ours.
 */
const fetchLive = async (ctx: FetchContext<DependencySpec>): Promise<LiveObject<LiveDependency>[]> => {
  const callers = new Set<string>();
  for (const obj of ctx.desired) callers.add(obj.spec.callerTag);
  for (const id of ctx.managedIds) {
    const key = parseDependencyId(id);
    if (key) callers.add(key.callerTag);
  }
  return readEdgesOf(ctx, [...callers].sort());
};

/**
 * The edges with these ids: the outgoing edges of each of their callers (one paged read per
 * caller, as `live.fetch` reads them), kept when asked for.
 */
const fetchByIds = async (
  ids: readonly string[],
  ctx: FetchContext<DependencySpec>,
): Promise<LiveObject<LiveDependency>[]> => {
  const wanted = new Set(ids);
  const callers = new Set<string>();
  for (const obj of ctx.desired) if (wanted.has(obj.id)) callers.add(obj.spec.callerTag);
  for (const id of ids) {
    const key = parseDependencyId(id);
    if (key && !ctx.desired.some((obj) => obj.id === id)) callers.add(key.callerTag);
  }
  const edges = await readEdgesOf(ctx, [...callers].sort());
  return edges.filter((edge) => wanted.has(edge.id));
};

/** The edge a change writes (create/update) or removes (delete), in the bulk body's shape. */
const bulkEntryOf = (change: DependencyChange): BulkEntry => {
  if (change.desired === undefined) {
    const key = liveKey(change.live.state);
    const edge = {
      tag: key.calleeTag,
      ...(key.method ? { method: key.method } : {}),
      ...(key.path ? { path: key.path } : {}),
    };
    return { change, callerTag: key.callerTag, edge };
  }
  const spec = change.desired.spec;
  // An update sends every field, so a description or metadata removed from the manifest is cleared.
  const clear = change.action === 'update';
  const edge = {
    tag: spec.calleeTag,
    ...(spec.method !== undefined ? { method: spec.method } : {}),
    ...(spec.path !== undefined ? { path: spec.path } : {}),
    ...(spec.description !== undefined || clear ? { description: spec.description ?? '' } : {}),
    ...(spec.metadata !== undefined || clear ? { metadata: spec.metadata ?? {} } : {}),
  };
  return { change, callerTag: spec.callerTag, edge };
};

/** Options of the dependency kind (tests use a small body limit to see requests split). */
export interface DependencyKindOptions {
  bodyLimitBytes?: number;
}

/** Builds the `dependency` kind handler. */
export const createDependencyKind = (
  options: DependencyKindOptions = {},
): KindHandler<DependencySpec, LiveDependency> => {
  const limit = options.bodyLimitBytes ?? BULK_BODY_LIMIT_BYTES;

  const applyBatch = async (
    changes: readonly DependencyChange[],
    ctx: ApplyContext,
  ): Promise<BatchOutcome<DependencySpec, LiveDependency>[]> => {
    const outcomes: BatchOutcome<DependencySpec, LiveDependency>[] = [];
    const writes: BulkEntry[] = [];
    const deletes: BulkEntry[] = [];
    for (const change of changes) {
      if (change.action === 'noop') {
        outcomes.push({ change });
        continue;
      }
      if (change.action === 'archive') {
        outcomes.push({
          change,
          error: new CortexSyncError('INTERNAL', `dependencies cannot be archived (\`${change.id}\`)`),
        });
        continue;
      }
      (change.action === 'delete' ? deletes : writes).push(bulkEntryOf(change));
    }
    outcomes.push(...(await sendBulk(ctx.client, 'PUT', writes, limit)));
    outcomes.push(...(await sendBulk(ctx.client, 'DELETE', deletes, limit)));
    return outcomes;
  };

  return {
    ...dependencyModel,
    live: { ...dependencyModel.live, fetch: fetchLive, fetchByIds },
    write: {
      async apply(change, ctx) {
        const [outcome] = await applyBatch([change], ctx);
        if (outcome?.error) throw outcome.error;
      },
      applyBatch,
    },
    // Export reads the edges of every entity (its callers), which it reads first.
    export: { ...dependencyModel.export, read: exportEdges(readEdgesOf), uses: ['entity'] },
  };
};

/** The `dependency` kind handler. */
export const dependencyKind = createDependencyKind();
