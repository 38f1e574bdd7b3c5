/**
 * Scorecards created the way the vendor's CLI creates them (`scorecards create -f x.yaml`: a YAML
 * descriptor POSTed to `/api/v1/scorecards/descriptor`) and from a data file (`--data`), and the
 * Initiative lifecycle on top of them, over HTTP as that CLI drives it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { Initiative, pageOf, Scorecard, Tagged } from './bodies.js';
import { bodyOf, call, start } from './helpers.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const YAML = 'application/yaml;charset=UTF-8';

/** The shape of the vendor CLI's own test scorecard (`data/import/scorecards/cli-test-scorecard.yaml`). */
const descriptor = (tag = 'prod-readiness', draft = false) => `tag: ${tag}
name: Prod Readiness
description: Used to test the CLI
draft: ${draft}
ladder:
  name: Default Ladder
  levels:
  - name: Gold
    rank: 1
    color: 7cf376
  - name: Bronze
    rank: 2
    description: the first step
rules:
- title: Has Custom Data
  expression: custom("testField") != null
  weight: 1
  level: Bronze
  filter:
    category: SERVICE
- title: Has a runbook
  expression: links("runbook").length > 0
  level: Gold
filter:
  query: 'entity.tag() == "cli-test-service"'
  category: SERVICE
`;

const initiative = (overrides: Record<string, unknown> = {}) => ({
  name: 'Reach Gold',
  description: 'by the end of the year',
  scorecardTag: 'prod-readiness',
  targetDate: '2026-12-31',
  isDraft: false,
  emphasizedLevels: [{ rank: 1 }],
  emphasizedRules: [{ expression: 'custom("testField") != null' }],
  ...overrides,
});

const ScorecardBody = z.looseObject({ scorecard: Scorecard });
const Rules = z.looseObject({
  scorecard: z.looseObject({ rules: z.array(z.looseObject({ identifier: z.string(), title: z.string() })) }),
});

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('scorecards created through the descriptor endpoint', () => {
  it('are listed, read, described, referenced by Initiatives (create, list, get, update, delete), and deleted', async () => {
    const emu = await start({ now: () => NOW });
    const created = await call(emu, 'POST', '/api/v1/scorecards/descriptor', {
      body: descriptor(),
      contentType: YAML,
    });
    expect(created.status).toBe(200);
    const { scorecard } = bodyOf(created, ScorecardBody);
    expect(scorecard).toMatchObject({ tag: 'prod-readiness', name: 'Prod Readiness', isDraft: false });
    expect(scorecard.levels).toEqual([
      { level: { name: 'Gold', number: 1 } },
      { level: { name: 'Bronze', number: 2 } },
    ]);

    const listed = bodyOf(await call(emu, 'GET', '/api/v1/scorecards'), pageOf('scorecards', Tagged));
    expect(listed.scorecards.map((s) => s.tag)).toContain('prod-readiness');
    const got = await call(emu, 'GET', '/api/v1/scorecards/prod-readiness');
    const rules = bodyOf(got, Rules).scorecard.rules;
    expect(rules.map((r) => r.title)).toEqual(['Has Custom Data', 'Has a runbook']);
    expect(rules[0]?.identifier).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const described = await call(emu, 'GET', '/api/v1/scorecards/prod-readiness/descriptor');
    expect(described.status).toBe(200);
    expect(z.string().parse(described.json)).toContain('description: Used to test the CLI');

    const made = await call(emu, 'POST', '/api/v1/initiatives', { body: initiative() });
    expect(made.status).toBe(200);
    const { cid } = bodyOf(made, Initiative);
    expect(made.json).toMatchObject({
      scorecardName: 'Prod Readiness',
      emphasizedLevels: [{ rank: 1, name: 'Gold', color: '#7cf376' }],
      emphasizedRules: [{ expression: 'custom("testField") != null', title: 'Has Custom Data' }],
    });
    const initiatives = bodyOf(await call(emu, 'GET', '/api/v1/initiatives'), pageOf('initiatives', Initiative));
    expect(initiatives.initiatives.map((i) => i.cid)).toEqual([cid]);
    expect((await call(emu, 'GET', `/api/v1/initiatives/${cid}`)).status).toBe(200);
    const updated = await call(emu, 'PUT', `/api/v1/initiatives/${cid}`, { body: initiative({ name: 'Reach Gold!' }) });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ cid, name: 'Reach Gold!' });
    expect((await call(emu, 'DELETE', `/api/v1/initiatives/${cid}`)).status).toBe(200);
    expect((await call(emu, 'GET', `/api/v1/initiatives/${cid}`)).status).toBe(404);

    expect((await call(emu, 'DELETE', '/api/v1/scorecards/prod-readiness')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/scorecards/prod-readiness')).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/scorecards/prod-readiness')).status).toBe(404);
  });

  it('replace by tag, keep nothing on dryRun, and refuse a rule whose level is not in the ladder', async () => {
    const emu = await start({ now: () => NOW });
    const dry = await call(emu, 'POST', '/api/v1/scorecards/descriptor?dryRun=true', {
      body: descriptor('dry-one'),
      contentType: YAML,
    });
    expect(dry.status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/scorecards/dry-one')).status).toBe(404);

    await call(emu, 'POST', '/api/v1/scorecards/descriptor', { body: descriptor(), contentType: YAML });
    const again = await call(emu, 'POST', '/api/v1/scorecards/descriptor', {
      body: descriptor('prod-readiness', true),
      contentType: YAML,
    });
    expect(again.json).toMatchObject({ scorecard: { isDraft: true } });
    const listed = bodyOf(await call(emu, 'GET', '/api/v1/scorecards'), pageOf('scorecards', Tagged));
    expect(listed.scorecards.filter((s) => s.tag === 'prod-readiness')).toHaveLength(1);

    const bad = await call(emu, 'POST', '/api/v1/scorecards/descriptor', {
      body: descriptor().replace('level: Gold', 'level: Platinum'),
      contentType: YAML,
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ message: expect.stringContaining("rules.1.level: no level named 'Platinum'") });
    const noTag = await call(emu, 'POST', '/api/v1/scorecards/descriptor', {
      body: descriptor().replace('tag: prod-readiness\n', ''),
      contentType: YAML,
    });
    expect(noTag.status).toBe(400);
    expect(noTag.json).toMatchObject({ message: expect.stringContaining('tag') });
  });

  it('writes need the scorecard permission; reads any valid key', async () => {
    const emu = await start();
    emu.addApiKey({ value: 'viewer', permissions: ['VIEW_INITIATIVES'] });
    const denied = await call(emu, 'POST', '/api/v1/scorecards/descriptor', {
      body: descriptor(),
      contentType: YAML,
      key: 'viewer',
    });
    expect(denied.status).toBe(403);
    expect((await call(emu, 'DELETE', '/api/v1/scorecards/production-readiness', { key: 'viewer' })).status).toBe(403);
    expect(
      (await call(emu, 'GET', '/api/v1/scorecards/production-readiness/descriptor', { key: 'viewer' })).status,
    ).toBe(200);
  });
});

describe('scorecards from a data file (--data)', () => {
  it('accepts vendor descriptors written by hand, so Initiatives can use them at once', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'emu-scorecards-'));
    temps.push(dir);
    const dataFile = path.join(dir, 'state.json');
    await writeFile(dataFile, JSON.stringify({ version: 1, state: { scorecards: { items: [parse(descriptor())] } } }));
    const emu = await start({ dataFile, now: () => NOW });
    const tags = bodyOf(await call(emu, 'GET', '/api/v1/scorecards'), pageOf('scorecards', Tagged)).scorecards.map(
      (s) => s.tag,
    );
    expect(tags).toEqual(['prod-readiness']);
    expect((await call(emu, 'POST', '/api/v1/initiatives', { body: initiative() })).status).toBe(200);
  });

  it('keeps scorecards created through the API across a restart, and names a broken item', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'emu-scorecards-'));
    temps.push(dir);
    const dataFile = path.join(dir, 'state.json');
    const first = await start({ dataFile, apiKey: 'k', now: () => NOW });
    await call(first, 'POST', '/api/v1/scorecards/descriptor', { body: descriptor(), contentType: YAML });
    await first.stop();
    const second = await start({ dataFile, apiKey: 'k', now: () => NOW });
    expect((await call(second, 'POST', '/api/v1/initiatives', { body: initiative() })).status).toBe(200);

    await writeFile(dataFile, JSON.stringify({ version: 1, state: { scorecards: { items: [{ tag: 'x' }] } } }));
    await expect(start({ dataFile })).rejects.toThrow(/state\.scorecards item 0: name/);
  });
});
