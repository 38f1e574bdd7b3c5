import { describe, expect, it } from 'vitest';
import type { Permission } from '../src/contract.js';
import { Counted, Initiative, pageOf } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-06-01T12:00:00Z');

/** An emulator with a movable clock. */
const startAt = async (ms = T0) => {
  const clock = { ms };
  const emu = await start({ now: () => clock.ms });
  return { emu, clock };
};

const validBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Prod readiness Q3',
  description: 'Get everything to Silver',
  scorecardTag: 'production-readiness',
  targetDate: '2026-12-31',
  isDraft: false,
  emphasizedLevels: [{ rank: 2 }],
  emphasizedRules: [{ expression: 'git != null' }],
  ...overrides,
});

const withoutKey = (key: string) => {
  const body: Record<string, unknown> = validBody();
  delete body[key];
  return body;
};

const expectVendorError = (json: unknown, status: number) => {
  expect(json).toMatchObject({ type: expect.any(String), message: expect.any(String), httpStatus: status });
};

describe('Initiatives', () => {
  it('creates an Initiative enriched from its scorecard, readable by cid and in the list', async () => {
    const { emu } = await startAt();
    const created = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody() });
    expect(created.status).toBe(200);
    const { cid } = bodyOf(created, Initiative);
    expect(cid).toMatch(/^in[0-9a-f]{16}$/);
    expect(created.json).toMatchObject({
      name: 'Prod readiness Q3',
      scorecardTag: 'production-readiness',
      scorecardName: 'Production Readiness',
      targetDate: '2026-12-31',
      emphasizedLevels: [{ rank: 2, name: 'Silver', color: expect.any(String) }],
      emphasizedRules: [{ expression: 'git != null', title: 'Has a git repository' }],
      dateCreated: '2026-06-01T12:00:00Z',
      dateUpdated: '2026-06-01T12:00:00Z',
    });
    const got = await call(emu, 'GET', `/api/v1/initiatives/${cid}`);
    expect(got.json).toEqual(created.json);
    const list = await call(emu, 'GET', '/api/v1/initiatives');
    expect(list.json).toEqual({ initiatives: [created.json], page: 0, total: 1, totalPages: 1 });
  });

  it('is not idempotent: the same body twice makes two Initiatives', async () => {
    const { emu } = await startAt();
    const a = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody() });
    const b = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody() });
    expect(bodyOf(a, Initiative).cid).not.toBe(bodyOf(b, Initiative).cid);
    const list = await call(emu, 'GET', '/api/v1/initiatives?pageSize=1');
    expect(list.json).toMatchObject({ total: 2, totalPages: 2, page: 0 });
    expect(bodyOf(list, pageOf('initiatives', Initiative)).initiatives).toHaveLength(1);
  });

  it('PUT replaces the whole object: omitted optional fields are cleared, dateCreated is kept', async () => {
    const { emu, clock } = await startAt();
    const filter = { types: { include: ['service'] } };
    const schedule = { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK' };
    const created = await call(emu, 'POST', '/api/v1/initiatives', {
      body: validBody({ filter, notificationSchedule: schedule }),
    });
    expect(created.json).toMatchObject({
      description: 'Get everything to Silver',
      filter,
      notificationSchedule: schedule,
    });
    clock.ms += 1000;
    const { description: _d, ...rest } = validBody({ name: 'Renamed', emphasizedLevels: [], isDraft: true });
    const { cid } = bodyOf(created, Initiative);
    const put = await call(emu, 'PUT', `/api/v1/initiatives/${cid}`, { body: rest });
    expect(put.status).toBe(200);
    const replaced = bodyOf(put, Initiative);
    expect(replaced.name).toBe('Renamed');
    expect(replaced.isDraft).toBe(true);
    expect(replaced.emphasizedLevels).toEqual([]);
    expect(put.json).not.toHaveProperty('description');
    expect(put.json).not.toHaveProperty('filter');
    expect(put.json).not.toHaveProperty('notificationSchedule');
    expect(replaced.dateCreated).toBe('2026-06-01T12:00:00Z');
    expect(replaced.dateUpdated).toBe('2026-06-01T12:00:01Z');
    expect((await call(emu, 'GET', `/api/v1/initiatives/${cid}`)).json).toEqual(put.json);
  });

  it('answers 404 for an unknown cid on GET, PUT and DELETE', async () => {
    const { emu } = await startAt();
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await call(emu, method, '/api/v1/initiatives/in0000000000000000', {
        body: method === 'PUT' ? validBody() : undefined,
      });
      expect(r.status, method).toBe(404);
      expectVendorError(r.json, 404);
    }
  });

  it('DELETE removes the Initiative', async () => {
    const { emu } = await startAt();
    const created = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody() });
    const { cid } = bodyOf(created, Initiative);
    expect((await call(emu, 'DELETE', `/api/v1/initiatives/${cid}`)).status).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/initiatives/${cid}`)).status).toBe(404);
    expect(bodyOf(await call(emu, 'GET', '/api/v1/initiatives'), Counted).total).toBe(0);
  });

  it.each([
    ['name missing', withoutKey('name')],
    ['scorecardTag missing', withoutKey('scorecardTag')],
    ['targetDate missing', withoutKey('targetDate')],
    ['isDraft missing', withoutKey('isDraft')],
    ['emphasizedLevels missing', withoutKey('emphasizedLevels')],
    ['emphasizedRules missing', withoutKey('emphasizedRules')],
    ['targetDate not a date', validBody({ targetDate: '31/12/2026' })],
    ['targetDate in the past', validBody({ targetDate: '2026-05-31' })],
    ['targetDate today', validBody({ targetDate: '2026-06-01' })],
    ['isDraft not a boolean', validBody({ isDraft: 'no' })],
    ['unknown scorecard', validBody({ scorecardTag: 'no-such-scorecard' })],
    ['rule not in the scorecard', validBody({ emphasizedRules: [{ expression: 'git = null' }] })],
    ['level rank not in the scorecard', validBody({ emphasizedLevels: [{ rank: 4 }] })],
    ['neither levels nor rules', validBody({ emphasizedLevels: [], emphasizedRules: [] })],
    ['types include and exclude', validBody({ filter: { types: { include: ['service'], exclude: ['team'] } } })],
    [
      'timeUnit not DAY/WEEK/MONTH',
      validBody({ notificationSchedule: { isDisabled: false, timeInterval: 1, timeUnit: 'YEAR' } }),
    ],
  ])('rejects a body with %s (400, vendor error shape), on POST and PUT', async (_label, body) => {
    const { emu } = await startAt();
    const post = await call(emu, 'POST', '/api/v1/initiatives', { body });
    expect(post.status).toBe(400);
    expect(post.json).toMatchObject({ type: 'BAD_REQUEST', httpStatus: 400 });
    const created = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody() });
    const put = await call(emu, 'PUT', `/api/v1/initiatives/${bodyOf(created, Initiative).cid}`, { body });
    expect(put.status).toBe(400);
    const listed = bodyOf(await call(emu, 'GET', '/api/v1/initiatives'), pageOf('initiatives', Initiative));
    expect(listed.initiatives).toEqual([created.json]);
  });

  it('rejects malformed JSON (400) and a non-JSON content type (415)', async () => {
    const { emu } = await startAt();
    const malformed = await call(emu, 'POST', '/api/v1/initiatives', {
      body: '{"name":',
      contentType: 'application/json',
    });
    expect(malformed.status).toBe(400);
    expectVendorError(malformed.json, 400);
    const yaml = await call(emu, 'POST', '/api/v1/initiatives', { body: 'name: x', contentType: 'application/yaml' });
    expect(yaml.status).toBe(415);
  });

  it('hides drafts unless includeDrafts=true', async () => {
    const { emu } = await startAt();
    const draft = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody({ isDraft: true }) });
    const live = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody({ name: 'Live' }) });
    const cids = async (query: string) =>
      bodyOf(await call(emu, 'GET', `/api/v1/initiatives${query}`), pageOf('initiatives', Initiative)).initiatives.map(
        (i) => i.cid,
      );
    const draftCid = bodyOf(draft, Initiative).cid;
    const liveCid = bodyOf(live, Initiative).cid;
    expect(await cids('')).toEqual([liveCid]);
    expect((await cids('?includeDrafts=true')).sort()).toEqual([draftCid, liveCid].sort());
    expect((await call(emu, 'GET', '/api/v1/initiatives?includeDrafts=maybe')).status).toBe(400);
  });

  it('hides Initiatives whose target date has passed unless includeExpired=true', async () => {
    const { emu, clock } = await startAt();
    const soon = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody({ targetDate: '2026-06-10' }) });
    const later = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody({ targetDate: '2027-01-01' }) });
    clock.ms += 10 * DAY; // 2026-06-11: `soon` expired yesterday
    const list = await call(emu, 'GET', '/api/v1/initiatives');
    const listedCids = bodyOf(list, pageOf('initiatives', Initiative)).initiatives.map((i) => i.cid);
    expect(listedCids).toEqual([bodyOf(later, Initiative).cid]);
    const all = await call(emu, 'GET', '/api/v1/initiatives?includeExpired=true');
    expect(bodyOf(all, Counted).total).toBe(2);
    const soonCid = bodyOf(soon, Initiative).cid;
    expect((await call(emu, 'GET', `/api/v1/initiatives/${soonCid}`)).status).toBe(200);
    // Re-PUTting the expired one fails: its target date is no longer in the future.
    expect((await call(emu, 'PUT', `/api/v1/initiatives/${soonCid}`, { body: validBody() })).status).toBe(200);
    const stale = await call(emu, 'PUT', `/api/v1/initiatives/${soonCid}`, {
      body: validBody({ targetDate: '2026-06-10' }),
    });
    expect(stale.status).toBe(400);
  });

  it('lets VIEW_INITIATIVES read but not write, and EDIT_INITIATIVES do both', async () => {
    const { emu } = await startAt();
    const keys: Record<string, Permission[]> = {
      viewer: ['VIEW_INITIATIVES'],
      editor: ['EDIT_INITIATIVES'],
      outsider: ['EDIT_ENTITIES'],
    };
    for (const [value, permissions] of Object.entries(keys)) emu.addApiKey({ value, permissions });
    const created = await call(emu, 'POST', '/api/v1/initiatives', { body: validBody(), key: 'editor' });
    expect(created.status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/initiatives', { key: 'editor' })).status).toBe(200);
    const { cid } = bodyOf(created, Initiative);
    expect((await call(emu, 'GET', `/api/v1/initiatives/${cid}`, { key: 'viewer' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/initiatives', { key: 'viewer' })).status).toBe(200);
    expect((await call(emu, 'POST', '/api/v1/initiatives', { body: validBody(), key: 'viewer' })).status).toBe(403);
    expect((await call(emu, 'DELETE', `/api/v1/initiatives/${cid}`, { key: 'viewer' })).status).toBe(403);
    expect((await call(emu, 'GET', '/api/v1/initiatives', { key: 'outsider' })).status).toBe(403);
  });
});
