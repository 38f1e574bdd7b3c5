/**
 * Fakes for executor tests: an in-memory `ApiClient` (the port, not a mock of the executor) and
 * small kinds written as plain objects whose `apply` sends one request per change through the
 * client the executor hands them, logging when each change starts and ends.
 */
import {
  type ApiClient,
  type ApiRequest,
  type ApiResponse,
  emptyClientStats,
  type HttpMethod,
} from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import { type Action, type Change, type KindName, type ObjectKey, objectKey } from '../../src/core/model.js';
import type { AnyKindHandler, ApplyContext, BatchOutcome } from '../../src/kinds/types.js';

export interface MemoryApi extends ApiClient {
  /** Every request, in the order it was sent. */
  sent: ApiRequest[];
}

/**
 * Answers 200 to everything, except paths listed in `failures` (answered with that HTTP status as
 * an `ApiError`). `attempts` sets how many attempts a path took (retries the client made).
 */
export const memoryApi = (
  options: { failures?: Record<string, number>; attempts?: Record<string, number> } = {},
): MemoryApi => {
  const sent: ApiRequest[] = [];
  const request = async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
    sent.push(req);
    await tick();
    const attempts = options.attempts?.[req.path] ?? 1;
    const status = options.failures?.[req.path];
    if (status !== undefined) {
      throw new ApiError('API', {
        operation: req.operation,
        method: req.method,
        path: req.path,
        status,
        apiMessage: 'refused by the test',
        attempts,
        durationMs: 7,
      });
    }
    return { status: 200, headers: {}, body: {} as T, attempts, durationMs: 3 };
  };
  return { sent, request, paginate: async () => [], close: async () => {}, stats: emptyClientStats };
};

/** Yields to the event loop once. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const METHODS: Record<Action, HttpMethod> = {
  create: 'POST',
  update: 'PUT',
  delete: 'DELETE',
  archive: 'PUT',
  noop: 'GET',
};

/** The path a fake kind writes a change to. */
export const pathOf = (change: Pick<Change, 'kind' | 'id'>): string => `/api/v1/fake/${change.kind}/${change.id}`;

const send = (change: Change, ctx: ApplyContext) =>
  ctx.client.request({
    operation: `${change.action} ${change.kind} ${change.id}`,
    method: METHODS[change.action],
    path: pathOf(change),
    body: { id: change.id },
  });

/** What the fake kinds saw: `start kind/id` and `end kind/id` in order, and the most changes in flight. */
export interface Trace {
  events: string[];
  inFlight: number;
  maxInFlight: number;
  batches: ObjectKey[][];
}
export const newTrace = (): Trace => ({ events: [], inFlight: 0, maxInFlight: 0, batches: [] });

const base = (kind: KindName): Omit<AnyKindHandler, 'write'> => ({
  kind,
  title: kind,
  layout: { ownsFile: () => false },
  manifest: {
    schema: undefined as never,
    parse: () => ({ objects: [], diagnostics: [] }),
    references: () => [],
    canonical: () => null,
  },
  live: { fetch: async () => [], canonical: () => null },
  prune: { action: 'delete' },
});

/** A kind applying one change at a time; each change takes `ticks` turns of the event loop. */
export const tracedKind = (kind: KindName, trace: Trace, ticks = 3): AnyKindHandler => ({
  ...base(kind),
  write: {
    async apply(change, ctx) {
      const key = objectKey(change.kind, change.id);
      trace.events.push(`start ${key}`);
      trace.inFlight += 1;
      trace.maxInFlight = Math.max(trace.maxInFlight, trace.inFlight);
      try {
        for (let i = 0; i < ticks; i++) await tick();
        await send(change, ctx);
      } finally {
        trace.inFlight -= 1;
        trace.events.push(`end ${key}`);
      }
    },
  },
});

/**
 * A kind with a bulk endpoint: `applyBatch` sends one request for the whole batch and reports the
 * changes whose id is in `refuse` as failed. `apply` must never be called by the executor.
 */
export const batchKind = (kind: KindName, trace: Trace, refuse: readonly string[] = []): AnyKindHandler => ({
  ...base(kind),
  write: {
    apply: async () => {
      throw new Error('apply called on a batch kind');
    },
    async applyBatch(changes, ctx): Promise<BatchOutcome[]> {
      trace.batches.push(changes.map((c) => objectKey(c.kind, c.id)));
      const first = changes[0];
      if (!first) return [];
      await ctx.client.request({
        operation: `bulk ${first.action} ${kind}`,
        method: first.action === 'delete' ? 'DELETE' : 'PUT',
        path: `/api/v1/fake/${kind}/bulk`,
        body: changes.map((c) => c.id),
      });
      return changes.map((change) =>
        refuse.includes(change.id) ? { change, error: new Error(`${change.id}: refused in bulk`) } : { change },
      );
    },
  },
});

/**
 * A planned change; `waitsFor` lists the keys it must wait for. Like the planner's, it carries a
 * manifest when it writes one and the live object when there is one.
 */
export const change = (kind: KindName, id: string, action: Action, waitsFor: ObjectKey[] = []): Change => {
  const file = `.cortex/${kind}/${id}.yaml`;
  const doc = { file, index: 0, line: 1, column: 1, value: {}, locate: () => ({ line: 1, column: 1 }) };
  const desired = { kind, id, source: { file, line: 1, column: 1 }, spec: {}, doc };
  const live = { kind, id, state: {} };
  return {
    kind,
    id,
    action,
    diff: [],
    waitsFor,
    ...(action === 'delete' || action === 'archive' ? {} : { desired }),
    ...(action === 'create' ? {} : { live }),
  };
};
