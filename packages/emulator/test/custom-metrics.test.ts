/** Custom metrics over HTTP: the four operations, their bodies and the permission. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pageOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Point = z.looseObject({ timestamp: z.string(), value: z.number() });
const base = '/api/v1/eng-intel/custom-metrics/vulnerabilities/entity/svc';

describe('custom metrics', () => {
  it('adds one and many data points, reads them in a range, and deletes a range', async () => {
    const now = Date.parse('2026-06-15T12:00:00Z');
    const emu = await start({ now: () => now });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    expect((await call(emu, 'POST', base, { body: { value: 3 } })).status).toBe(200);
    const bulk = {
      series: [
        { timestamp: '2026-06-01T00:00:00', value: '1.5' },
        { timestamp: '2026-06-10T00:00:00Z', value: 2 },
      ],
    };
    expect((await call(emu, 'POST', `${base}/bulk`, { body: bulk })).status).toBe(200);
    const all = bodyOf(await call(emu, 'GET', base), pageOf('data', Point));
    expect(all.total).toBe(3);
    expect(all.data.map((p) => p.value)).toEqual([3, 2, 1.5]);
    const june = await call(emu, 'GET', `${base}?startDate=2026-06-05T00:00:00Z&endDate=2026-06-11T00:00:00Z`);
    expect(bodyOf(june, pageOf('data', Point)).data).toEqual([{ timestamp: '2026-06-10T00:00:00Z', value: 2 }]);
    const removed = await call(emu, 'DELETE', `${base}?startDate=2026-01-01T00:00:00Z&endDate=2026-06-11T00:00:00Z`);
    expect(removed.status).toBe(204);
    expect(bodyOf(await call(emu, 'GET', base), pageOf('data', Point)).data.map((p) => p.value)).toEqual([3]);
  });

  it('refuses bad bodies, old points, an unbounded delete and a key without the permission', async () => {
    const now = Date.parse('2026-06-15T12:00:00Z');
    const emu = await start({ now: () => now });
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    expect((await call(emu, 'POST', base, { body: { value: 'lots' } })).status).toBe(400);
    expect((await call(emu, 'POST', base, { body: { value: 1, timestamp: '2025-01-01T00:00:00Z' } })).status).toBe(400);
    expect((await call(emu, 'POST', `${base}/bulk`, { body: { series: [] } })).status).toBe(400);
    const tooMany = { series: Array.from({ length: 101 }, () => ({ timestamp: '2026-06-01T00:00:00Z', value: 1 })) };
    expect((await call(emu, 'POST', `${base}/bulk`, { body: tooMany })).status).toBe(400);
    expect((await call(emu, 'DELETE', base)).status).toBe(400);
    expect(bodyOf(await call(emu, 'GET', base), pageOf('data', Point)).total).toBe(0);
    emu.addApiKey({ value: 'entities-only', permissions: ['EDIT_ENTITIES'] });
    expect((await call(emu, 'GET', base, { key: 'entities-only' })).status).toBe(403);
  });
});
