/**
 * Reads every page of a `{<listKey>: [...], page, totalPages}` list through `request`.
 */
import { ApiError } from '../core/errors.js';
import { pathWithQuery } from './request-parts.js';
import type { ApiRequest, ApiResponse } from './types.js';

/** Page size asked for when the request's query sets none (the API's maximum). */
export const DEFAULT_PAGE_SIZE = 1000;
/** A guard against a server that never reports the end: reaching it is an error, never a shorter list. */
export const MAX_PAGES = 100_000;

type Send = <T = unknown>(req: ApiRequest) => Promise<ApiResponse<T>>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Requests page 0 (or the query's `page`), 1, 2 … with `pageSize` 1000 unless the query sets one,
 * and concatenates `body[listKey]`. Stops on an empty page, when `page + 1 >= totalPages`, or when
 * the response has no `totalPages`. A status accepted through `acceptStatus` that is not 2xx (e.g. a
 * 404 probe) ends the list. A 2xx body without the list is an `ApiError`, never an empty list: a
 * misread list must not look like "nothing exists" (that would plan deletes). So is a list still
 * going after `maxPages` pages: what the pages after it hold is unknown.
 */
export const paginateWith = async <T>(
  send: Send,
  req: ApiRequest,
  listKey: string,
  maxPages: number = MAX_PAGES,
): Promise<T[]> => {
  const items: T[] = [];
  const query = { ...req.query };
  if (query.pageSize === undefined) query.pageSize = DEFAULT_PAGE_SIZE;
  const first = Number(query.page ?? 0);
  const start = Number.isInteger(first) && first >= 0 ? first : 0;
  for (let page = start; ; page++) {
    if (page - start >= maxPages) throw endlessList(req, query, page, listKey, maxPages);
    const res = await send<unknown>({ ...req, query: { ...query, page } });
    if (res.status < 200 || res.status >= 300) break;
    const list = isRecord(res.body) ? res.body[listKey] : undefined;
    if (!Array.isArray(list)) {
      throw new ApiError('API', {
        operation: req.operation,
        method: req.method,
        path: pathWithQuery(req.path, { ...query, page }),
        status: res.status,
        apiMessage: `the response has no "${listKey}" list`,
        body: res.body,
        attempts: res.attempts,
        durationMs: res.durationMs,
      });
    }
    items.push(...(list as T[]));
    const totalPages = isRecord(res.body) ? res.body.totalPages : undefined;
    if (list.length === 0 || typeof totalPages !== 'number' || page + 1 >= totalPages) break;
  }
  return items;
};

const endlessList = (
  req: ApiRequest,
  query: ApiRequest['query'],
  page: number,
  listKey: string,
  maxPages: number,
): ApiError =>
  new ApiError('API', {
    operation: req.operation,
    method: req.method,
    path: pathWithQuery(req.path, { ...query, page }),
    apiMessage: `the "${listKey}" list did not end after ${maxPages} pages (each answer said more pages follow); a list read only in part is not read`,
  });
