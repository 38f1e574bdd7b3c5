import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { paginateWith } from '../../src/api/paginate.js';
import type { ApiRequest, ApiResponse } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import { type Handler, sendJson, startServer, type TestServer, virtualClock } from './helpers.js';

const dispatcher = new Agent({ keepAliveTimeout: 1000 });
afterAll(() => dispatcher.close());

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const setup = async (handler: Handler) => {
  const clock = virtualClock();
  server = await startServer(handler, clock);
  const client = createApiClient({ baseUrl: server.url, apiKey: 'k', dispatcher, ...clock });
  return { client, received: server.received };
};

/** Serves `items` in the vendor envelope, honouring page and pageSize like the API. */
const pagedList =
  (items: readonly unknown[], listKey: string): Handler =>
  (req, res) => {
    const query = new URL(req.url, 'http://x').searchParams;
    const page = Number(query.get('page') ?? 0);
    const pageSize = Number(query.get('pageSize') ?? 250);
    const totalPages = Math.ceil(items.length / pageSize);
    sendJson(res, 200, {
      [listKey]: items.slice(page * pageSize, (page + 1) * pageSize),
      page,
      total: items.length,
      totalPages,
    });
  };

describe('paginate', () => {
  it('reads every page with pageSize 1000 and stops at totalPages', async () => {
    const items = Array.from({ length: 2500 }, (_, i) => ({ tag: `e-${i}` }));
    const { client, received } = await setup(pagedList(items, 'descriptors'));
    const got = await client.paginate<{ tag: string }>(
      {
        operation: 'list entity descriptors',
        method: 'GET',
        path: '/api/v1/catalog/descriptors',
        query: { types: ['service', 'team'], yaml: false },
      },
      'descriptors',
    );
    expect(got).toEqual(items);
    expect(received.map((r) => r.url)).toEqual(
      [0, 1, 2].map((p) => `/api/v1/catalog/descriptors?types=service&types=team&yaml=false&pageSize=1000&page=${p}`),
    );
  });

  it('keeps a pageSize set in the query and stops exactly on the last page', async () => {
    const { client, received } = await setup(pagedList(['a', 'b', 'c', 'd'], 'definitions'));
    const got = await client.paginate(
      { operation: 'list', method: 'GET', path: '/api/v1/catalog/definitions', query: { pageSize: 2 } },
      'definitions',
    );
    expect(got).toEqual(['a', 'b', 'c', 'd']);
    expect(received).toHaveLength(2);
  });

  it('stops on an empty page even if totalPages says more', async () => {
    const { client, received } = await setup((_req, res, i) =>
      sendJson(res, 200, { initiatives: i === 0 ? [{ cid: 'in1' }] : [], page: i, totalPages: 10 }),
    );
    const got = await client.paginate({ operation: 'list', method: 'GET', path: '/api/v1/initiatives' }, 'initiatives');
    expect(got).toEqual([{ cid: 'in1' }]);
    expect(received).toHaveLength(2);
  });

  it('a response without the list is an error, never an empty list', async () => {
    const { client } = await setup((_req, res) => sendJson(res, 200, { items: [], page: 0, totalPages: 1 }));
    const error = await client
      .paginate({ operation: 'list catalog pages', method: 'GET', path: '/api/v1/catalog-pages' }, 'catalogPages')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe(
      'list catalog pages failed: GET /api/v1/catalog-pages?pageSize=1000&page=0 → HTTP 200: the response has no "catalogPages" list',
    );
  });

  it('a list that never ends is an error naming the operation, never the pages read so far', async () => {
    const asked: number[] = [];
    // Every answer holds an item and says a thousand pages follow, whatever page was asked for.
    const send = async <T>(req: ApiRequest): Promise<ApiResponse<T>> => {
      asked.push(Number(req.query?.page));
      const body = { things: [{ n: asked.length }], page: req.query?.page, totalPages: 1_000_000 };
      return { status: 200, headers: {}, body: body as T, attempts: 1, durationMs: 0 };
    };
    const req: ApiRequest = { operation: 'list things', method: 'GET', path: '/api/v1/things' };
    const error = await paginateWith(send, req, 'things', 5).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/list things/);
    expect((error as ApiError).message).toMatch(/did not end after 5 pages/);
    expect(asked).toEqual([0, 1, 2, 3, 4]);
  });

  it('an accepted non-2xx status ends the list', async () => {
    const { client } = await setup((_req, res) => sendJson(res, 404, { message: 'Not found' }));
    const got = await client.paginate(
      { operation: 'list deps', method: 'GET', path: '/api/v1/catalog/x/dependencies', acceptStatus: [404] },
      'dependencies',
    );
    expect(got).toEqual([]);
  });
});
