import { describe, expect, it } from 'vitest';
import { seedScorecards } from '../src/resources/scorecards.js';
import { z } from 'zod';
import { pageOf, Scorecard, Tagged } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

describe('Scorecards (seeded)', () => {
  it('starts with production-readiness: Gold, Silver, Bronze and its rules', async () => {
    const emu = await start();
    const list = await call(emu, 'GET', '/api/v1/scorecards');
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ page: 0, totalPages: 1 });
    const listed = bodyOf(list, pageOf('scorecards', Tagged));
    expect(listed.total).toBe(listed.scorecards.length);
    const tags = listed.scorecards.map((s) => s.tag);
    expect(tags).toContain('production-readiness');
    const got = await call(emu, 'GET', '/api/v1/scorecards/production-readiness');
    expect(got.status).toBe(200);
    const { scorecard } = bodyOf(got, z.looseObject({ scorecard: Scorecard }));
    expect(scorecard.name).toBe('Production Readiness');
    expect(scorecard.levels).toEqual([
      { level: { name: 'Gold', number: 1 } },
      { level: { name: 'Silver', number: 2 } },
      { level: { name: 'Bronze', number: 3 } },
    ]);
    expect(scorecard.rules.map((r) => r.expression)).toContain('git != null');
    expect(listed.scorecards.find((s) => s.tag === 'production-readiness')).toEqual(scorecard);
  });

  it('answers 404 in the vendor error shape for an unknown tag', async () => {
    const emu = await start();
    const r = await call(emu, 'GET', '/api/v1/scorecards/nope');
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ type: 'NOT_FOUND', httpStatus: 404 });
  });

  it('has no write route but the descriptor endpoint', async () => {
    const emu = await start();
    const r = await call(emu, 'POST', '/api/v1/scorecards', { body: { tag: 'x' } });
    expect(r.status).toBe(405);
    expect((await call(emu, 'GET', '/api/v1/scorecards/x')).status).toBe(404);
  });

  it('seedScorecards adds scorecards that Initiatives can then reference; showDrafts=false hides drafts', async () => {
    const emu = await start({ now: () => Date.parse('2026-06-01T00:00:00Z') });
    const body = {
      name: 'Adopt tracing',
      scorecardTag: 'observability',
      targetDate: '2026-09-30',
      isDraft: false,
      emphasizedLevels: [{ rank: 1 }],
      emphasizedRules: [{ expression: 'custom("tracing") = true' }],
    };
    expect((await call(emu, 'POST', '/api/v1/initiatives', { body })).status).toBe(400);
    seedScorecards(emu.state, [
      {
        tag: 'observability',
        name: 'Observability',
        isDraft: true,
        levels: [{ rank: 1, name: 'Traced', color: '#00f' }],
        rules: [{ expression: 'custom("tracing") = true', title: 'Tracing on' }],
      },
    ]);
    const created = await call(emu, 'POST', '/api/v1/initiatives', { body });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      scorecardName: 'Observability',
      emphasizedLevels: [{ rank: 1, name: 'Traced', color: '#00f' }],
      emphasizedRules: [{ expression: 'custom("tracing") = true', title: 'Tracing on' }],
    });
    const tags = async (query: string) =>
      bodyOf(await call(emu, 'GET', `/api/v1/scorecards${query}`), pageOf('scorecards', Tagged)).scorecards.map(
        (s) => s.tag,
      );
    expect(await tags('')).toContain('observability');
    expect(await tags('?showDrafts=false')).not.toContain('observability');
  });

  it('reads need a valid key but no particular permission', async () => {
    const emu = await start();
    emu.addApiKey({ value: 'no-perms', permissions: [] });
    expect((await call(emu, 'GET', '/api/v1/scorecards', { key: 'no-perms' })).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/scorecards', { key: null })).status).toBe(401);
  });
});
