import { expect, it } from 'vitest';
import { call, descriptor, start } from './helpers.js';

const exists = async (emu: { url: string; apiKey: string }, tag: string) =>
  (await call(emu, 'GET', `/api/v1/catalog/${tag}`)).status === 200;

it('failRate answers 503 without processing', async () => {
  const emu = await start({ faults: { failRate: 1 } });
  const r = await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('a') });
  expect(r.status).toBe(503);
  emu.setFaults({});
  expect(await exists(emu, 'a')).toBe(false);
  expect(emu.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/open-api', status: 503, fault: 'failed' });
});

it('lostResponseRate processes the request, then closes the connection without an answer', async () => {
  const emu = await start({ faults: { lostResponseRate: 1 } });
  await expect(call(emu, 'POST', '/api/v1/open-api', { body: descriptor('lost') })).rejects.toThrow();
  emu.setFaults({});
  expect(await exists(emu, 'lost')).toBe(true);
  expect(emu.requests[0]).toMatchObject({ status: 0, fault: 'lost-response' });
});

it('dropConnectionRate closes the connection before processing', async () => {
  const emu = await start({ faults: { dropConnectionRate: 1 } });
  await expect(call(emu, 'POST', '/api/v1/open-api', { body: descriptor('dropped') })).rejects.toThrow();
  emu.setFaults({});
  expect(await exists(emu, 'dropped')).toBe(false);
});

it('every429 forces a 429 on every k-th request, with Retry-After', async () => {
  const emu = await start({ faults: { every429: 3, retryAfterSeconds: 2 } });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await call(emu, 'GET', '/api/v1/catalog');
    statuses.push(r.status);
    if (r.status === 429) {
      expect(r.headers.get('retry-after')).toBe('2');
      expect(r.json).toMatchObject({ status: 429, retryAfter: 2 });
    }
  }
  expect(statuses).toEqual([200, 200, 429, 200, 200, 429]);
});

it('repeats the same fault pattern for the same seed, and takes faults over HTTP at runtime', async () => {
  const pattern = async (seed: number) => {
    const emu = await start({ seed });
    const set = await call(emu, 'POST', '/_emulator/faults', { body: { failRate: 0.5 }, key: null });
    expect(set.json).toEqual({ failRate: 0.5 });
    const out: number[] = [];
    for (let i = 0; i < 16; i++) out.push((await call(emu, 'GET', '/api/v1/catalog')).status);
    // control endpoints are never faulted
    expect((await call(emu, 'GET', '/_emulator/state', { key: null })).status).toBe(200);
    return out;
  };
  const a = await pattern(42);
  expect(a).toContain(503);
  expect(a).toContain(200);
  expect(await pattern(42)).toEqual(a);
  expect(await pattern(7)).not.toEqual(a);
});

it('reject refuses only the matching operation, in the vendor error shape, without processing it', async () => {
  const emu = await start({
    faults: {
      reject: [
        {
          method: 'POST',
          path: '/api/v1/catalog/definitions',
          bodyIncludes: 'database',
          status: 400,
          message: 'Refused type',
        },
      ],
    },
  });
  const refused = await call(emu, 'POST', '/api/v1/catalog/definitions', {
    body: { type: 'database', name: 'Database', schema: {} },
  });
  expect(refused.status).toBe(400);
  expect(refused.json).toMatchObject({ type: 'BAD_REQUEST', message: 'Refused type' });
  expect((await call(emu, 'GET', '/api/v1/catalog/definitions/database')).status).toBe(404);
  expect((await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('other') })).status).toBe(200);
  const otherType = await call(emu, 'POST', '/api/v1/catalog/definitions', {
    body: { type: 'queue', name: 'Q', schema: {} },
  });
  expect(otherType.status).toBe(200);
  expect(emu.requests[0]).toMatchObject({ status: 400, fault: 'rejected' });
});

it('windowed429 answers 429 to every k-th request and to every request inside the window it opens', async () => {
  let now = 1_000_000;
  const emu = await start({ now: () => now, rateLimitPerMinute: 0 });
  const set = await call(emu, 'POST', '/_emulator/faults', { body: { windowed429: 3 }, key: null });
  expect(set.json).toEqual({ windowed429: 3 });
  const seen: [number, string | null][] = [];
  const step = async (advanceMs: number) => {
    now += advanceMs;
    const r = await call(emu, 'GET', '/api/v1/catalog');
    seen.push([r.status, r.headers.get('retry-after')]);
  };
  await step(0); // 1
  await step(0); // 2
  await step(0); // 3: opens a 1 s window
  await step(400); // inside: 1 s left, rounded up
  await step(599); // still inside
  await step(1); // the window has closed: request 6 is a k-th one, a new window
  await step(1000); // closed again: request 7
  expect(seen).toEqual([
    [200, null],
    [200, null],
    [429, '1'],
    [429, '1'],
    [429, '1'],
    [429, '1'],
    [200, null],
  ]);
  expect(emu.requests.map((r) => r.fault ?? null)).toEqual([
    null,
    null,
    'forced-429',
    'window-429',
    'window-429',
    'forced-429',
    null,
  ]);
});

it('dropFromLists leaves a named item out of list answers for that many reads; reads by identity still find it', async () => {
  const emu = await start();
  for (const tag of ['kept', 'hidden']) await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag) });
  const set = await call(emu, 'POST', '/_emulator/faults', {
    body: { dropFromLists: [{ match: 'hidden', reads: 2, path: '/api/v1/catalog' }] },
    key: null,
  });
  expect(set.json).toEqual({ dropFromLists: [{ match: 'hidden', reads: 2, path: '/api/v1/catalog' }] });
  const tags = async () =>
    ((await call(emu, 'GET', '/api/v1/catalog')).json as { entities: { tag: string }[]; total: number }).entities
      .map((e) => e.tag)
      .sort();
  // Another path's lists are not touched, and do not count.
  const descriptors = await call(emu, 'GET', '/api/v1/catalog/descriptors');
  expect(JSON.stringify(descriptors.json)).toContain('hidden');
  expect(await tags()).toEqual(['kept']);
  const short = (await call(emu, 'GET', '/api/v1/catalog')).json as { total: number };
  expect(short.total).toBe(1); // the answer looks whole
  expect((await call(emu, 'GET', '/api/v1/catalog/hidden')).status).toBe(200);
  expect(await tags()).toEqual(['hidden', 'kept']);
  expect((await call(emu, 'GET', '/_emulator/faults', { key: null })).json).toEqual({
    dropFromLists: [{ match: 'hidden', reads: 0, path: '/api/v1/catalog' }],
  });
  expect(emu.requests.filter((r) => r.fault === 'list-dropped')).toHaveLength(2);
});
