/** Fault injection for tests: which fault (if any) hits a request, decided by a seeded PRNG. */
import type { RetryAfterWindow } from './rate-limit.js';
import { isObject } from './util.js';

export interface EmulatorFaults {
  /** Fraction (0–1) of requests answered 503 without being processed. */
  failRate?: number;
  /** Fraction of requests that ARE processed, after which the socket is destroyed without a response. */
  lostResponseRate?: number;
  /** Delay before every request is handled, in milliseconds. */
  latencyMs?: number;
  /** Force a 429 on every k-th API request (k ≥ 1). */
  every429?: number;
  /** `Retry-After` seconds of forced 429s (default 0; 1 for `windowed429`). */
  retryAfterSeconds?: number;
  /**
   * A fixed-window limiter: every k-th API request (k ≥ 1) is answered 429 with `Retry-After:
   * retryAfterSeconds` (default 1) and opens that window; every request that arrives while it is
   * open is answered 429 too, with the seconds left. A client that starts requests inside the
   * window only prolongs its own refusals.
   */
  windowed429?: number;
  /** Fraction of requests whose socket is destroyed before processing. */
  dropConnectionRate?: number;
  /**
   * Refuse every request matching a method and a path (exact, or a prefix ending in `*`) with this
   * status and message, in the vendor's error shape, without processing it. For tests of how a
   * client handles one refused operation among many (e.g. an entity type the API will not create).
   */
  reject?: RejectRule[];
  /**
   * Leave a named item out of list answers (an eventually consistent index, a page boundary that
   * moved) for the next `reads` answers that held it: what a client must never take for absence.
   * Reads by identity (`GET …/{id}`) still find it.
   */
  dropFromLists?: ListDropRule[];
}

/** One item (or several) a list answer leaves out, for a number of answers. */
export interface ListDropRule {
  /**
   * An identity of the item: its `name`, `tag`, `cid`, `id`, `slug`, `type`, or a descriptor's
   * `x-cortex-tag`; exact, or a prefix when it ends in `*`.
   */
  match: string;
  /** How many list answers still leave it out (each answer that held it counts once; 0: spent). */
  reads: number;
  /** Only answers of this path (exact, or a prefix ending in `*`); default every list. */
  path?: string;
}

export interface RejectRule {
  method: string;
  path: string;
  /** Only requests whose body contains this text. */
  bodyIncludes?: string;
  status: number;
  message: string;
}

/** The first reject rule matching this request, if any. */
export const matchReject = (
  faults: EmulatorFaults,
  method: string,
  path: string,
  body: string,
): RejectRule | undefined =>
  faults.reject?.find(
    (rule) =>
      rule.method.toUpperCase() === method &&
      (rule.path.endsWith('*') ? path.startsWith(rule.path.slice(0, -1)) : path === rule.path) &&
      (rule.bodyIncludes === undefined || body.includes(rule.bodyIncludes)),
  );

const matchesPattern = (pattern: string, value: string): boolean =>
  pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : value === pattern;

const IDENTITY_FIELDS = ['name', 'tag', 'cid', 'id', 'slug', 'type'] as const;

/** The identities of one list item (see `ListDropRule.match`). */
const identitiesOf = (item: unknown): string[] => {
  if (typeof item === 'string') {
    const tag = /^\s*x-cortex-tag:\s*['"]?([^'"\n]+?)['"]?\s*$/m.exec(item)?.[1];
    return tag !== undefined ? [tag] : [];
  }
  if (!isObject(item)) return [];
  const out: string[] = [];
  for (const field of IDENTITY_FIELDS) {
    const value = item[field];
    if (typeof value === 'string') out.push(value);
  }
  const info = item.info;
  if (isObject(info) && typeof info['x-cortex-tag'] === 'string') out.push(info['x-cortex-tag']);
  return out;
};

/** A copy of `faults` whose counting rules are the emulator's own (the caller's object is never changed). */
export const ownFaults = (faults: EmulatorFaults): EmulatorFaults => ({
  ...faults,
  ...(faults.dropFromLists !== undefined ? { dropFromLists: faults.dropFromLists.map((r) => ({ ...r })) } : {}),
});

/**
 * A list answer (`{<listKey>: [...], page, total, totalPages}`) without the items the
 * `dropFromLists` rules name; each rule that left something out counts one read down. The totals
 * are lowered to match, so the answer looks whole. `undefined` when nothing was left out.
 */
export const dropFromListAnswer = (faults: EmulatorFaults, path: string, body: unknown): unknown => {
  const rules = (faults.dropFromLists ?? []).filter(
    (rule) => rule.reads > 0 && (rule.path === undefined || matchesPattern(rule.path, path)),
  );
  if (rules.length === 0 || !isObject(body) || typeof body.total !== 'number') return undefined;
  const listKey = Object.keys(body).find((key) => Array.isArray(body[key]));
  const items = listKey === undefined ? undefined : (body[listKey] as unknown[]);
  if (listKey === undefined || items === undefined) return undefined;
  const used = new Set<ListDropRule>();
  const kept = items.filter((item) => {
    const ids = identitiesOf(item);
    const rule = rules.find((r) => ids.some((id) => matchesPattern(r.match, id)));
    if (rule === undefined) return true;
    used.add(rule);
    return false;
  });
  if (used.size === 0) return undefined;
  for (const rule of used) rule.reads -= 1;
  const dropped = items.length - kept.length;
  const total = Math.max(0, body.total - dropped);
  const pageSize = Math.max(1, items.length);
  return {
    ...body,
    [listKey]: kept,
    total,
    ...(typeof body.totalPages === 'number'
      ? { totalPages: Math.max(body.totalPages, Math.ceil(total / pageSize)) }
      : {}),
  };
};

/** What happens to one request. */
export interface FaultDecision {
  drop: boolean;
  fail: boolean;
  force429: boolean;
  loseResponse: boolean;
  /** For a forced 429: its `Retry-After` seconds, when the fault mode decides them. */
  retryAfterSeconds?: number;
  /** The request arrived inside an open `windowed429` window. */
  insideWindow?: boolean;
}

/** The fixed window of `windowed429` and the arrival time of the request being decided. */
export interface WindowClock {
  window: RetryAfterWindow;
  now: number;
}

/** The `windowed429` decision: refused inside an open window, or the k-th request opening one. */
const decideWindow = (
  faults: EmulatorFaults,
  n: number,
  clock: WindowClock | undefined,
): Pick<FaultDecision, 'retryAfterSeconds' | 'insideWindow'> | undefined => {
  const k = faults.windowed429 ?? 0;
  if (clock === undefined || !Number.isInteger(k) || k < 1) return undefined;
  const left = clock.window.remainingSeconds(clock.now);
  if (left !== undefined) return { retryAfterSeconds: left, insideWindow: true };
  if (n % k !== 0) return undefined;
  const seconds = faults.retryAfterSeconds ?? 1;
  clock.window.open(clock.now, seconds);
  return { retryAfterSeconds: seconds };
};

const rate = (value: unknown): number => (typeof value === 'number' && value > 0 ? Math.min(1, value) : 0);

/**
 * Decides the faults of the `n`-th API request (1-based). Draws from `random` only for the rates
 * that are set, in a fixed order, so the same seed and the same request sequence repeat exactly.
 */
export const decideFaults = (
  faults: EmulatorFaults,
  n: number,
  random: () => number,
  windowClock?: WindowClock,
): FaultDecision => {
  const draw = (r: number): boolean => r > 0 && random() < r;
  const drop = draw(rate(faults.dropConnectionRate));
  const fail = draw(rate(faults.failRate));
  const k = faults.every429 ?? 0;
  const windowed = decideWindow(faults, n, windowClock);
  const force429 = (Number.isInteger(k) && k >= 1 && n % k === 0) || windowed !== undefined;
  const loseResponse = draw(rate(faults.lostResponseRate));
  return { drop, fail, force429, loseResponse, ...windowed };
};

/** Reads a faults object from untrusted JSON; unknown keys and non-numbers are ignored. */
export const parseFaults = (value: unknown): EmulatorFaults => {
  if (!isObject(value)) return {};
  const out: EmulatorFaults = {};
  for (const key of [
    'failRate',
    'lostResponseRate',
    'latencyMs',
    'every429',
    'windowed429',
    'retryAfterSeconds',
    'dropConnectionRate',
  ] as const) {
    const v = value[key];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[key] = v;
  }
  if (Array.isArray(value.reject)) {
    out.reject = value.reject.filter(
      (r): r is RejectRule =>
        isObject(r) &&
        typeof r.method === 'string' &&
        typeof r.path === 'string' &&
        typeof r.status === 'number' &&
        typeof r.message === 'string' &&
        (r.bodyIncludes === undefined || typeof r.bodyIncludes === 'string'),
    );
  }
  if (Array.isArray(value.dropFromLists)) {
    out.dropFromLists = value.dropFromLists.flatMap((r): ListDropRule[] =>
      isObject(r) &&
      typeof r.match === 'string' &&
      r.match !== '' &&
      typeof r.reads === 'number' &&
      Number.isInteger(r.reads) &&
      r.reads >= 0 &&
      (r.path === undefined || typeof r.path === 'string')
        ? [{ match: r.match, reads: r.reads, ...(typeof r.path === 'string' ? { path: r.path } : {}) }]
        : [],
    );
  }
  return out;
};
