/**
 * The kinds' reads of what the API answers: every page of a list, each item parsed tolerantly,
 * and an item that cannot be read fails the read naming the operation, the item and the field
 * (never an object silently left out, which a plan would take for absent).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ApiClient, type ApiRequest, type ApiResponse, emptyClientStats } from '../../../src/api/types.js';
import { readEachOnce, readOneOrAbsent, readPagedList } from '../../../src/kinds/shared/api-reads.js';

const item = z.looseObject({ tag: z.string().min(1), rank: z.number().optional() });

/** A client whose pages are `pages` (by `page`), and whose `paginate` answers `listed`. */
const clientOf = (pages: readonly unknown[], listed: unknown[] = []): ApiClient & { asked: ApiRequest[] } => {
  const asked: ApiRequest[] = [];
  return {
    asked,
    close: async () => {},
    stats: emptyClientStats,
    paginate: async <T>(req: ApiRequest): Promise<T[]> => {
      asked.push(req);
      return listed as T[];
    },
    request: async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
      asked.push(req);
      const body = pages[Number(req.query?.page ?? 0)];
      return { status: body === undefined ? 404 : 200, headers: {}, body: body as T, attempts: 1, durationMs: 1 };
    },
  };
};

const request: ApiRequest = { operation: 'list things', method: 'GET', path: '/things', query: { drafts: true } };

describe('a paged list', () => {
  it('with a known key is read through the client’s paging, each item parsed and unknown fields kept', async () => {
    const client = clientOf(
      [],
      [
        { tag: 'a', extra: 1 },
        { tag: 'b', rank: 2 },
      ],
    );
    const read = await readPagedList(client, { request, list: 'things', item, itemName: 'a thing' });
    expect(read).toEqual([
      { tag: 'a', extra: 1 },
      { tag: 'b', rank: 2 },
    ]);
    expect(client.asked).toEqual([request]);
  });

  it('with a key found by a locator is read page by page until the last page', async () => {
    const pages = [
      { items: [{ tag: 'a' }], totalPages: 3 },
      { items: [{ tag: 'b' }], totalPages: 3 },
      { items: [{ tag: 'c' }], totalPages: 3 },
      { items: [{ tag: 'never read' }], totalPages: 3 },
    ];
    const client = clientOf(pages);
    const locate = (body: unknown) => (body as { items?: unknown[] }).items;
    const read = await readPagedList(client, { request, list: locate, item, itemName: 'a thing', pageSize: 1 });
    expect(read.map((t) => t.tag)).toEqual(['a', 'b', 'c']);
    expect(client.asked.map((r) => r.query)).toEqual([0, 1, 2].map((page) => ({ drafts: true, page, pageSize: 1 })));
  });

  it('refuses a page without its list rather than reading it as empty', async () => {
    const client = clientOf([{ totalPages: 1 }]);
    await expect(readPagedList(client, { request, list: () => undefined, item, itemName: 'a thing' })).rejects.toThrow(
      /^list things: the response holds no list$/,
    );
  });

  it('fails rather than returning part of a list that never ends', async () => {
    const endless: ApiClient = {
      ...clientOf([]),
      request: async <T>() => ({
        status: 200,
        headers: {},
        body: { items: [{ tag: 'again' }], totalPages: 1e12 } as T,
        attempts: 1,
        durationMs: 1,
      }),
    };
    const locate = (body: unknown) => (body as { items?: unknown[] }).items;
    await expect(readPagedList(endless, { request, list: locate, item, itemName: 'a thing' })).rejects.toThrow(
      /^list things: the list did not end after 100000 pages$/,
    );
  });

  it('names the read, the item and the field of an item it cannot read', async () => {
    const client = clientOf([], [{ tag: 'a' }, { tag: 'b', rank: 'high' }]);
    await expect(readPagedList(client, { request, list: 'things', item, itemName: 'a thing' })).rejects.toThrow(
      /^list things: item 1 of the list is not a thing \(rank: .*number/,
    );
  });
});

describe('a read by identity', () => {
  const one = { operation: 'read thing a', method: 'GET' as const, path: '/things/a' };

  it('is undefined on a 404, and the object otherwise', async () => {
    expect(await readOneOrAbsent(clientOf([]), { request: one, item, itemName: 'a thing' })).toBeUndefined();
    expect(await readOneOrAbsent(clientOf([{ tag: 'a' }]), { request: one, item, itemName: 'a thing' })).toEqual({
      tag: 'a',
    });
  });

  it('names the read and the field of an answer it cannot read', async () => {
    await expect(readOneOrAbsent(clientOf([{ tag: '' }]), { request: one, item, itemName: 'a thing' })).rejects.toThrow(
      /^read thing a: the response is not a thing \(tag: /,
    );
    await expect(readOneOrAbsent(clientOf(['text']), { request: one, item, itemName: 'a thing' })).rejects.toThrow(
      /\(\(root\): /,
    );
  });

  it('of several ids reads each once and leaves out those with none', async () => {
    const asked: string[] = [];
    const read = await readEachOnce(['a', 'b', 'a', 'gone'], async (id) => {
      asked.push(id);
      return id === 'gone' ? undefined : { id };
    });
    expect(read).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(asked).toEqual(['a', 'b', 'gone']);
  });
});
