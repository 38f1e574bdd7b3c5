/**
 * Custom metrics data points (`/api/v1/eng-intel/custom-metrics/{customMetricKey}/entity/{tagOrId}`):
 * read (paged, optional `startDate`/`endDate`), add one, add up to 100 in bulk, delete a time range.
 * Permission `CONFIGURE_CUSTOM_METRICS` (the vendor's). Inferred: any metric key is accepted (a tenant
 * defines them in its UI; the API has no endpoint for it); a timestamp without an offset is UTC; a
 * numeric string is read as its number (Jackson's coercion; the vendor CLI sends bulk values as
 * text); a data point older than six months is refused with 400 (the vendor documents the limit; its API
 * has been seen to answer 200 and drop the point, which helps no one testing).
 */
import { z } from 'zod';
import {
  type EmulatorRequest,
  type EmulatorResponse,
  errorResponse,
  pagedResponse,
  type RouteDef,
} from '../contract.js';
import { isoSeconds, own, putOwn } from '../util.js';
import { type EntitiesState, findEntity, type StoredEntity } from './entity-store.js';
import { readBody } from './initiatives-body.js';

export interface CustomMetricsState {
  /** Metric key → entity id → data points (ms since the epoch, value). */
  byKey: Record<string, Record<string, { timestamp: number; value: number }[]>>;
}

export const initialCustomMetricsState = (): CustomMetricsState => ({ byKey: {} });

export interface CustomMetricsSlices {
  entities: EntitiesState;
  customMetrics: CustomMetricsState;
}

/** ms since the epoch of an ISO 8601 date-time; one without an offset is read as UTC. */
export const utcMillis = (text: string): number | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text)) return undefined;
  const withZone = /T.*(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : /T/.test(text) ? `${text}Z` : `${text}T00:00:00Z`;
  const ms = Date.parse(withZone);
  return Number.isNaN(ms) ? undefined : ms;
};

const timestamp = z.string().refine((s) => utcMillis(s) !== undefined, { message: 'expected an ISO 8601 date-time' });
/** A number, or a numeric string (the vendor CLI sends bulk values as text; the API binds them as Jackson does). */
const metricValue = z.union([
  z.number(),
  z
    .string()
    .regex(/^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/, { message: 'expected a number' })
    .transform(Number),
]);
const point = z.object({ timestamp: timestamp.optional(), value: metricValue });
const bulk = z.object({
  series: z
    .array(z.object({ timestamp, value: metricValue }))
    .min(1)
    .max(100),
});

const SIX_MONTHS_MS = 183 * 24 * 60 * 60 * 1000;
const PERMISSION = ['CONFIGURE_CUSTOM_METRICS'] as const;
const PATTERN = '/api/v1/eng-intel/custom-metrics/:customMetricKey/entity/:tagOrId';

type Handler = (
  key: string,
  entity: StoredEntity,
  req: EmulatorRequest,
  state: CustomMetricsSlices,
  now: number,
) => EmulatorResponse;

const withTarget =
  (fn: Handler) =>
  (req: EmulatorRequest, state: CustomMetricsSlices, env: { now(): number }): EmulatorResponse => {
    const key = req.params.customMetricKey ?? '';
    const tagOrId = req.params.tagOrId ?? '';
    const entity = findEntity(state.entities, tagOrId);
    if (!entity) return errorResponse(404, 'NOT_FOUND', `Entity not found: ${tagOrId}`);
    return fn(key, entity, req, state, env.now());
  };

/** Optional `startDate` / `endDate` query bounds; a 400 when one is not a date-time. */
const range = (req: EmulatorRequest, required: boolean): { from: number; to: number } | EmulatorResponse => {
  const bound = (name: string, fallback: number): number | EmulatorResponse => {
    const raw = req.query.get(name);
    if (raw === null || raw === '') {
      return required ? errorResponse(400, 'BAD_REQUEST', `Query parameter ${name} is required`) : fallback;
    }
    return utcMillis(raw) ?? errorResponse(400, 'BAD_REQUEST', `${name} must be an ISO 8601 date-time`);
  };
  const from = bound('startDate', Number.NEGATIVE_INFINITY);
  if (typeof from !== 'number') return from;
  const to = bound('endDate', Number.POSITIVE_INFINITY);
  if (typeof to !== 'number') return to;
  if (from > to) return errorResponse(400, 'BAD_REQUEST', 'startDate is after endDate');
  return { from, to };
};

const pointsOf = (state: CustomMetricsState, key: string, entity: StoredEntity) =>
  ((own(state.byKey, key) ?? putOwn(state.byKey, key, {}))[entity.id] ??= []);

const tooOld = (at: number, now: number): EmulatorResponse | undefined =>
  at < now - SIX_MONTHS_MS
    ? errorResponse(400, 'BAD_REQUEST', `Timestamp ${isoSeconds(at)} is more than six months old`)
    : undefined;

export const customMetricRoutes: readonly RouteDef<CustomMetricsSlices>[] = [
  {
    method: 'GET',
    pattern: PATTERN,
    permission: PERMISSION,
    handle: withTarget((key, entity, req, state) => {
      const r = range(req, false);
      if ('status' in r) return r;
      const data = (own(state.customMetrics.byKey, key)?.[entity.id] ?? [])
        .filter((p) => p.timestamp >= r.from && p.timestamp <= r.to)
        .sort((a, b) => b.timestamp - a.timestamp)
        .map((p) => ({ timestamp: isoSeconds(p.timestamp), value: p.value }));
      return pagedResponse(data, req.query, 'data');
    }),
  },
  {
    method: 'POST',
    pattern: PATTERN,
    permission: PERMISSION,
    handle: withTarget((key, entity, req, state, now) => {
      const body = readBody(req, point);
      if (!body.ok) return body.response;
      const at = body.value.timestamp === undefined ? now : (utcMillis(body.value.timestamp) ?? now);
      const old = tooOld(at, now);
      if (old) return old;
      pointsOf(state.customMetrics, key, entity).push({ timestamp: at, value: body.value.value });
      return { status: 200 };
    }),
  },
  {
    method: 'POST',
    pattern: `${PATTERN}/bulk`,
    permission: PERMISSION,
    handle: withTarget((key, entity, req, state, now) => {
      const body = readBody(req, bulk);
      if (!body.ok) return body.response;
      const points = body.value.series.map((p) => ({ timestamp: utcMillis(p.timestamp) ?? now, value: p.value }));
      for (const p of points) {
        const old = tooOld(p.timestamp, now);
        if (old) return old; // checked before anything is stored
      }
      pointsOf(state.customMetrics, key, entity).push(...points);
      return { status: 200 };
    }),
  },
  {
    method: 'DELETE',
    pattern: PATTERN,
    permission: PERMISSION,
    handle: withTarget((key, entity, req, state) => {
      const r = range(req, true);
      if ('status' in r) return r;
      const slot = own(state.customMetrics.byKey, key);
      const points = slot?.[entity.id];
      if (slot && points) slot[entity.id] = points.filter((p) => p.timestamp < r.from || p.timestamp > r.to);
      return { status: 204 };
    }),
  },
];
