/**
 * Bulk writes of dependency edges: `PUT` (create or update) and `DELETE` of
 * `/api/v1/catalog/dependencies`, both with the body `{values: {<caller>: [edges]}}`. Edges are
 * packed into as few requests as the API's body limit allows; never one request per edge.
 */
import type { ApiClient } from '../../api/types.js';
import { CortexSyncError } from '../../core/errors.js';
import type { BatchOutcome, KindChange } from '../types.js';
import type { DependencySpec, LiveDependency } from './schema.js';

type DependencyChange = KindChange<DependencySpec, LiveDependency>;

/** The API refuses request bodies over 2 MB; stay below it. */
export const BULK_BODY_LIMIT_BYTES = 2_000_000;

const BULK_DEPENDENCIES_PATH = '/api/v1/catalog/dependencies';

/** One edge of a bulk body, with the change it comes from. */
export interface BulkEntry {
  change: DependencyChange;
  callerTag: string;
  /** The item sent under the caller: `{tag, method?, path?, description?, metadata?}`. */
  edge: Record<string, unknown>;
}

/** The edges of one request, grouped by caller in first-seen order. */
interface BulkChunk {
  entries: BulkEntry[];
  body: { values: Record<string, Record<string, unknown>[]> };
}

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** `{"values":{}}` */
const EMPTY_BODY_BYTES = bytes({ values: {} });

/**
 * Packs entries into chunks whose JSON body stays within `limitBytes`. An entry that cannot fit
 * even alone is returned in `oversized` (it is never sent).
 */
export const packBulkChunks = (
  entries: readonly BulkEntry[],
  limitBytes: number,
): { chunks: BulkChunk[]; oversized: BulkEntry[] } => {
  const chunks: BulkChunk[] = [];
  const oversized: BulkEntry[] = [];
  let current: BulkChunk | undefined;
  let size = 0;
  /** Bytes `entry` adds to `chunk`: the edge, plus a comma, or a new `"caller":[…]` group. */
  const costIn = (chunk: BulkChunk | undefined, entry: BulkEntry): number => {
    const edge = bytes(entry.edge);
    const group = chunk?.body.values[entry.callerTag];
    if (group) return 1 + edge;
    const groups = chunk ? Object.keys(chunk.body.values).length : 0;
    return (groups > 0 ? 1 : 0) + bytes(entry.callerTag) + 1 + 2 + edge;
  };
  for (const entry of entries) {
    if (EMPTY_BODY_BYTES + costIn(undefined, entry) > limitBytes) {
      oversized.push(entry);
      continue;
    }
    if (!current || size + costIn(current, entry) > limitBytes) {
      current = { entries: [], body: { values: {} } };
      chunks.push(current);
      size = EMPTY_BODY_BYTES;
    }
    size += costIn(current, entry);
    current.entries.push(entry);
    const group = current.body.values[entry.callerTag];
    if (group) group.push(entry.edge);
    else current.body.values[entry.callerTag] = [entry.edge];
  }
  return { chunks, oversized };
};

const describeChunk = (verb: string, chunk: BulkChunk, part: number, parts: number): string => {
  const only = chunk.entries.length === 1 ? chunk.entries[0] : undefined;
  const what = only ? `dependency \`${only.change.id}\`` : `${chunk.entries.length} dependencies`;
  return parts > 1 ? `${verb} ${what} (request ${part} of ${parts})` : `${verb} ${what}`;
};

/**
 * Sends `entries` with `method` in as few requests as fit; every change of a failed request
 * fails with that request's error, the other requests go on.
 */
export const sendBulk = async (
  client: ApiClient,
  method: 'PUT' | 'DELETE',
  entries: readonly BulkEntry[],
  limitBytes: number,
): Promise<BatchOutcome<DependencySpec, LiveDependency>[]> => {
  if (entries.length === 0) return [];
  const verb = method === 'PUT' ? 'upsert' : 'delete';
  const { chunks, oversized } = packBulkChunks(entries, limitBytes);
  const outcomes: BatchOutcome<DependencySpec, LiveDependency>[] = oversized.map(({ change }) => ({
    change,
    error: new CortexSyncError(
      'API',
      `${verb} dependency \`${change.id}\`: this one edge is larger than the API's request limit of ${limitBytes} bytes; shorten its description or metadata`,
    ),
  }));
  for (const [i, chunk] of chunks.entries()) {
    try {
      await client.request({
        operation: describeChunk(verb, chunk, i + 1, chunks.length),
        method,
        path: BULK_DEPENDENCIES_PATH,
        body: chunk.body,
      });
      for (const { change } of chunk.entries) outcomes.push({ change });
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      for (const { change } of chunk.entries) outcomes.push({ change, error: err });
    }
  }
  return outcomes;
};
