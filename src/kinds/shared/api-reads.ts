/**
 * Reading what the API answers, tolerantly (zod schemas that keep unknown fields) and never
 * silently: an answer that is not what the kind reads is an `API` error naming the read, the item
 * and the field, not an object left out (a misread list must not look like "nothing exists",
 * which would plan creates and deletes).
 */
import type { z } from 'zod';
import { DEFAULT_PAGE_SIZE } from '../../api/paginate.js';
import type { ApiClient, ApiRequest } from '../../api/types.js';
import { CortexSyncError } from '../../core/errors.js';

/** The first problem zod found, located: `ladder.levels.0.rank: expected number`. */
const firstIssue = (error: z.ZodError): string => {
  const issue = error.issues[0];
  return issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unreadable';
};

/** `value` parsed with `schema`; otherwise an `API` error: `what` and the first problem. */
export const parseAnswer = <S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> => {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new CortexSyncError('API', `${what} (${firstIssue(parsed.error)})`);
  return parsed.data;
};

/** A guard against a server that never reports the last page. */
const MAX_PAGES = 100_000;

/** Where a page's items are when the vendor does not document the key: the list, or undefined for none. */
export type ListLocator = (body: unknown) => readonly unknown[] | undefined;

/** A paged list to read. */
export interface PagedList<S extends z.ZodType> {
  /** The first page's request; its `operation` names the read in every message. */
  request: ApiRequest;
  /**
   * The key of each page's list (`initiatives`): read with the client's `paginate`. A locator
   * instead, where the key is not known, reads the pages here, with the same rules.
   */
  list: string | ListLocator;
  /** One item, as the API answers it (tolerant). */
  item: S;
  /** What one item is, for a message: `an Initiative`. */
  itemName: string;
  /** Items per page for a locator's reads (the client's `paginate` takes it from the query). */
  pageSize?: number;
}

/**
 * Every page of a list whose key a locator finds, as `paginate` reads a known key: pages 0, 1, …
 * until an empty page, a page without a numeric `totalPages`, or the last page.
 */
const readPagesLocated = async (
  client: ApiClient,
  request: ApiRequest,
  locate: ListLocator,
  pageSize: number,
): Promise<unknown[]> => {
  const items: unknown[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const response = await client.request<unknown>({ ...request, query: { ...request.query, page, pageSize } });
    const list = locate(response.body);
    if (list === undefined) throw new CortexSyncError('API', `${request.operation}: the response holds no list`);
    items.push(...list);
    const totalPages = (response.body as { totalPages?: unknown } | null)?.totalPages;
    if (list.length === 0 || typeof totalPages !== 'number' || page + 1 >= totalPages) return items;
  }
  // Never a partial list: what was not read must not look absent.
  throw new CortexSyncError('API', `${request.operation}: the list did not end after ${MAX_PAGES} pages`);
};

/** Every item of a paged list, each parsed; one that is not an item fails the read, naming it. */
export const readPagedList = async <S extends z.ZodType>(
  client: ApiClient,
  read: PagedList<S>,
): Promise<z.output<S>[]> => {
  const items =
    typeof read.list === 'string'
      ? await client.paginate<unknown>(read.request, read.list)
      : await readPagesLocated(client, read.request, read.list, read.pageSize ?? DEFAULT_PAGE_SIZE);
  return items.map((item, index) =>
    parseAnswer(read.item, item, `${read.request.operation}: item ${index} of the list is not ${read.itemName}`),
  );
};

/** One object to read by its identity. */
export interface ReadByIdentity<S extends z.ZodType> {
  /** The GET; its `operation` names the read in a message. A 404 is accepted: there is none. */
  request: ApiRequest;
  /** The object, as the API answers it (tolerant). */
  item: S;
  /** What the object is, for a message: `an entity type`. */
  itemName: string;
}

/** The object a read by identity answers, parsed, or undefined when there is none (404). */
export const readOneOrAbsent = async <S extends z.ZodType>(
  client: ApiClient,
  read: ReadByIdentity<S>,
): Promise<z.output<S> | undefined> => {
  const res = await client.request<unknown>({ ...read.request, acceptStatus: [404] });
  if (res.status === 404) return undefined;
  return parseAnswer(read.item, res.body, `${read.request.operation}: the response is not ${read.itemName}`);
};

/** `read` of each id once, at once; the ids with none are left out (a `fetchByIds`). */
export const readEachOnce = async <T>(
  ids: readonly string[],
  read: (id: string) => Promise<T | undefined>,
): Promise<T[]> => {
  const found: (T | undefined)[] = await Promise.all([...new Set(ids)].map(read));
  return found.filter((o): o is T => o !== undefined);
};
