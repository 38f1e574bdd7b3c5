/**
 * Pure arithmetic of the benchmark: medians, the naive baseline, the request budget of a no-op
 * plan, and what the emulator's request log says about an apply (rate, 429s, requests sent
 * inside a `Retry-After` window).
 */
import type { RequestLogEntry } from '../../emulator/src/server.js';
import type { RepositoryShape } from './generate.js';

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The API's documented budget, in requests per minute. */
export const API_BUDGET_PER_MINUTE = 1000;
/** Page size of the descriptor list. */
export const DESCRIPTOR_PAGE_SIZE = 1000;

/**
 * The naive baseline: one GET per object, as a tool that reads every object by itself does (the
 * vendor's Terraform provider on every plan): every entity, every other object, and one read per
 * dependency caller (edges have no read of their own either way).
 */
export const naiveRequests = (shape: RepositoryShape): number =>
  shape.entities +
  shape.entityTypes +
  shape.catalogPages +
  shape.initiatives +
  shape.scaffolderTemplates +
  shape.callers;

/**
 * List reads of a no-op plan besides entities and dependencies, one page each: entity types,
 * catalog pages, Initiatives, Scaffolder templates, plus the two lists the plan needs for them
 * (the ownership inventories of those kinds, and the scorecards Initiatives name).
 */
export const OTHER_LIST_READS = [
  'list entity types',
  'list catalog pages',
  'list Initiatives',
  'list Scaffolder templates',
  'read ownership inventories',
  'list scorecards',
] as const;

/** The most requests a no-op plan may send (the floor the API allows: it has no bulk read of edges). */
export const requestBudget = (shape: RepositoryShape) => {
  const entityPages = Math.ceil(shape.entities / DESCRIPTOR_PAGE_SIZE);
  const otherLists = OTHER_LIST_READS.length;
  return { entityPages, otherLists, callers: shape.callers, total: entityPages + otherLists + shape.callers };
};

/** Requests of `byOperation` (keys `METHOD operation`) whose operation is `name`. */
export const requestsOf = (byOperation: Record<string, number>, name: string): number =>
  Object.entries(byOperation)
    .filter(([key]) => key.slice(key.indexOf(' ') + 1) === name)
    .reduce((sum, [, n]) => sum + n, 0);

export interface ApplyLogFigures {
  /** Every API request of the apply, reads included. */
  requests: number;
  /** The writes of the changes (`changeWrites`): the lease write before the plan is not one. */
  writes: number;
  /** From the first to the last arrival of any request. */
  spanMs: number;
  /** From the first to the last change write's arrival. */
  writeSpanMs: number;
  /** Requests per minute over `spanMs`. */
  overallPerMinute: number;
  /** Writes per minute over `writeSpanMs`. */
  writesPerMinute: number;
  rateLimited: number;
  /** Answers that were errors other than 429 (including dropped connections). */
  failedResponses: number;
  /** Requests that arrived inside a `Retry-After` window (see `insideRetryAfter`). */
  insideRetryAfter: number;
}

const perMinute = (count: number, spanMs: number): number =>
  count > 1 && spanMs > 0 ? ((count - 1) * 60_000) / spanMs : 0;

/**
 * Requests that arrived after a 429 had been answered and before its `Retry-After` elapsed.
 * A window opens when the 429 was sent (`ts + durationMs`) plus `allowanceMs`, for requests the
 * client had already sent when the answer reached it; it lasts `retryAfterMs`.
 */
export const insideRetryAfter = (
  log: readonly RequestLogEntry[],
  retryAfterMs: number,
  allowanceMs: number,
): number => {
  const windows = log
    .filter((r) => r.status === 429)
    .map((r) => {
      const answered = r.ts + r.durationMs;
      return { from: answered + allowanceMs, to: answered + retryAfterMs };
    });
  if (windows.length === 0) return 0;
  return log.filter((r) => windows.some((w) => r.ts > w.from && r.ts < w.to)).length;
};

/**
 * The `Retry-After` the emulator sends at `perMinute`: the seconds until a token is back, rounded
 * up, so 1 s whenever a token refills within a second (`perMinute` ≥ 60).
 */
export const emulatorRetryAfterMs = (perMinuteBudget: number): number =>
  Math.max(1, Math.ceil(60 / perMinuteBudget)) * 1000;

/**
 * The writes of the apply's changes: from the first write after the plan's last read to the last
 * write. The lease write that comes before the plan (and the second it waits to confirm the lease)
 * is the apply's fixed cost, not its rate: counting it made a 2,000-entity apply look 3 s slower.
 */
export const changeWrites = (log: readonly RequestLogEntry[]): RequestLogEntry[] => {
  const sorted = [...log].sort((a, b) => a.ts - b.ts);
  const writes = sorted.filter((r) => r.method !== 'GET');
  const middle = writes[Math.floor(writes.length / 2)];
  if (!middle) return [];
  const lastReadBefore = sorted.filter((r) => r.method === 'GET' && r.ts <= middle.ts).at(-1);
  return lastReadBefore ? writes.filter((r) => r.ts >= lastReadBefore.ts) : writes;
};

/** What the emulator log says about the apply whose requests are `log`. */
export const applyLogFigures = (log: readonly RequestLogEntry[], budgetPerMinute: number): ApplyLogFigures => {
  const writes = changeWrites(log);
  const span = (entries: readonly RequestLogEntry[]) =>
    entries.length === 0 ? 0 : Math.max(...entries.map((r) => r.ts)) - Math.min(...entries.map((r) => r.ts));
  const spanMs = span(log);
  const writeSpanMs = span(writes);
  return {
    requests: log.length,
    writes: writes.length,
    spanMs,
    writeSpanMs,
    overallPerMinute: perMinute(log.length, spanMs),
    writesPerMinute: perMinute(writes.length, writeSpanMs),
    rateLimited: log.filter((r) => r.status === 429).length,
    failedResponses: log.filter((r) => r.status !== 429 && (r.status === 0 || r.status >= 400)).length,
    insideRetryAfter: insideRetryAfter(log, emulatorRetryAfterMs(budgetPerMinute), RETRY_AFTER_ALLOWANCE_MS),
  };
};

/** Time a request already sent may take to arrive after the 429 was answered (loopback, busy emulator). */
export const RETRY_AFTER_ALLOWANCE_MS = 50;
