import { expect, it } from 'vitest';
import { call, start } from './helpers.js';

it('answers 429 problem+json with an integer Retry-After once the bucket is empty, and refills with the clock', async () => {
  let clock = 1_000_000;
  const emu = await start({ rateLimitPerMinute: 60, rateLimitBurst: 2, now: () => clock });
  expect((await call(emu, 'GET', '/api/v1/catalog')).status).toBe(200);
  expect((await call(emu, 'GET', '/api/v1/catalog')).status).toBe(200);
  const limited = await call(emu, 'GET', '/api/v1/catalog');
  expect(limited.status).toBe(429);
  expect(limited.headers.get('content-type')).toBe('application/problem+json');
  const retryAfter = limited.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBe(1); // 60/min: one token per second
  expect(limited.json).toEqual({
    type: expect.any(String),
    title: expect.any(String),
    status: 429,
    detail: expect.any(String),
    retryAfter: 1,
  });
  // control endpoints are never limited
  expect((await call(emu, 'GET', '/_emulator/requests', { key: null })).status).toBe(200);
  clock += 1000;
  expect((await call(emu, 'GET', '/api/v1/catalog')).status).toBe(200);
  expect((await call(emu, 'GET', '/api/v1/catalog')).status).toBe(429);
});

it('does not limit when rateLimitPerMinute is 0', async () => {
  const emu = await start({ rateLimitPerMinute: 0, rateLimitBurst: 1 });
  for (let i = 0; i < 5; i++) expect((await call(emu, 'GET', '/api/v1/catalog')).status).toBe(200);
});
