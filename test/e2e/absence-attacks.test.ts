/**
 * The absence checks attacked as an outsider would: a list drop together with another writer's
 * create, a record read by tag that fails, an Initiative's cid that is gone or names another
 * Initiative, a record type left out, a record broken by hand, a pending prune and another
 * source's record left out. The CLI's `apply` against the emulator; the request log shows what
 * was sent.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { INVENTORY_ENTITY_TYPE, inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY, cli, writeFiles } from '../cli/run.js';
import { absenceWorld, INITIATIVE, initiative, scorecard, SOURCE } from './absence-world.js';

const { emulator, checkout, repository, api, initiativesNamed, recordOf, since, posts, dropFromLists } = absenceWorld();

const send = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
  fetch(`${emulator().url}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': contentType },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });

const createByHand = async (name: string): Promise<string> => {
  const res = await send('POST', '/api/v1/initiatives', {
    name,
    description: 'made in the UI',
    scorecardTag: 'readiness',
    targetDate: '2030-12-31',
    isDraft: false,
    emphasizedLevels: [{ rank: 1 }],
    emphasizedRules: [],
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { cid: string }).cid;
};

/** Rewrites this source's record by hand (as anyone with a key can). */
const editRecord = async (edit: (definition: Record<string, unknown>) => void): Promise<void> => {
  const raw = (await api(`/api/v1/catalog/${encodeURIComponent(inventoryTag(SOURCE))}/openapi`)) as {
    info: Record<string, unknown> & { 'x-cortex-definition': Record<string, unknown> };
  };
  edit(raw.info['x-cortex-definition']);
  const res = await send('POST', '/api/v1/open-api', stringify(raw), 'application/openapi;charset=UTF-8');
  expect(res.status, await res.text()).toBe(200);
};

const applied = async (dir: string, ...flags: string[]) => {
  const run = await cli(['apply', ...flags], { emulator: emulator(), cwd: dir });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  return run;
};

describe('attacks on the absence checks', () => {
  it('1. a list drop while another writer creates the same Initiative (left out of 2 reads): adopted, never a second POST', async () => {
    const dir = await repository();
    await rm(join(dir, '.cortex/initiatives/kill2.yaml'));
    await applied(dir);
    await createByHand(INITIATIVE);
    await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE) });
    dropFromLists(INITIATIVE, 2, '/api/v1/initiatives');
    const from = emulator().requests.length;
    await applied(dir);
    expect(posts(from, '/api/v1/initiatives')).toEqual([]);
    expect(await initiativesNamed(INITIATIVE)).toHaveLength(1);
  });

  it('2. the own record left out and its read by tag failing (503): the run from another origin fails naming the read, writes nothing', async () => {
    await applied(await repository());
    const other = await checkout('https://github.com/mallory/fork', { 'cortex-sync.yaml': `sourceId: ${SOURCE}\n` });
    emulator().setFaults({
      dropFromLists: [{ match: inventoryTag(SOURCE), reads: 50, path: '/api/v1/catalog/descriptors' }],
      reject: [
        { method: 'GET', path: `/api/v1/catalog/${inventoryTag(SOURCE)}/openapi`, status: 503, message: 'busy' },
      ],
    });
    const from = emulator().requests.length;
    // The other origin's checkout holds only its settings: an empty repository on purpose, the
    // most a hostile fork could ask (remove everything), so the binding is what refuses it.
    const run = await cli(['apply', '--allow-empty'], { emulator: emulator(), cwd: other });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/read ownership inventory/);
    expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('3. a managed Initiative left out and its read by cid failing (503): refused with the reason, no POST', async () => {
    const dir = await repository();
    await applied(dir);
    const cid = ((await recordOf(SOURCE)).serverIds as Record<string, Record<string, string>>).initiative?.[INITIATIVE];
    emulator().setFaults({
      dropFromLists: [{ match: INITIATIVE, reads: 50, path: '/api/v1/initiatives' }],
      reject: [{ method: 'GET', path: `/api/v1/initiatives/${cid}`, status: 503, message: 'busy' }],
    });
    const from = emulator().requests.length;
    const run = await cli(['apply'], { emulator: emulator(), cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/absence-unconfirmed/);
    expect(run.stdout + run.stderr).toMatch(/Initiative `Kill2 test 3` is missing from the list/);
    expect(posts(from, '/api/v1/initiatives')).toEqual([]);
    expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('4. the recorded cid names an Initiative deleted in the UI: created once, and the record keeps the new cid', async () => {
    const dir = await repository();
    await applied(dir);
    const [old] = (await initiativesNamed(INITIATIVE)) as { cid: string }[];
    expect((await send('DELETE', `/api/v1/initiatives/${old?.cid}`)).ok).toBe(true);
    const from = emulator().requests.length;
    await applied(dir);
    expect(posts(from, '/api/v1/initiatives')).toHaveLength(1);
    const [now] = (await initiativesNamed(INITIATIVE)) as { cid: string }[];
    expect(now?.cid).not.toBe(old?.cid);
    expect(await recordOf(SOURCE)).toMatchObject({ serverIds: { initiative: { [INITIATIVE]: now?.cid } } });
  });

  it("5. a record edited by hand to give the managed Initiative another Initiative's cid, with ours left out of the list: the other one is never written", async () => {
    const dir = await repository();
    await applied(dir);
    const foreign = await createByHand('Someone else’s');
    await editRecord((definition) => {
      definition.serverIds = { initiative: { [INITIATIVE]: foreign } };
    });
    await writeFiles(dir, { '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE, 'Edited') });
    dropFromLists(INITIATIVE, 1, '/api/v1/initiatives');
    const from = emulator().requests.length;
    await applied(dir);
    expect(since(from).filter((r) => r.method === 'PUT' && r.path === `/api/v1/initiatives/${foreign}`)).toEqual([]);
    expect(posts(from, '/api/v1/initiatives')).toEqual([]);
    expect(await initiativesNamed('Someone else’s')).toEqual([
      expect.objectContaining({ description: 'made in the UI' }),
    ]);
    // The record's cid is put right.
    const [ours] = (await initiativesNamed(INITIATIVE)) as { cid: string }[];
    expect(await recordOf(SOURCE)).toMatchObject({ serverIds: { initiative: { [INITIATIVE]: ours?.cid } } });
  });

  it('6. a manifest cannot plant a cid: validate refuses it at its line', async () => {
    const dir = await repository({
      '.cortex/initiatives/kill2.yaml': `${initiative(INITIATIVE)}cid: in0000000000000000\n`,
    });
    const run = await cli(['validate'], { emulator: emulator(), cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/kill2\.yaml:\d+/);
    expect(run.stdout + run.stderr).toMatch(/cid/);
  });

  it('7. the record type left out of 5 entity-type lists: a run from another origin is still refused (source-claimed)', async () => {
    await applied(await repository());
    const other = await checkout('https://github.com/mallory/fork', {
      'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
      '.cortex/scorecards/readiness.yaml': scorecard('Taken over'),
    });
    dropFromLists(INVENTORY_ENTITY_TYPE, 5, '/api/v1/catalog/definitions');
    const from = emulator().requests.length;
    // The other origin's checkout holds only its settings: an empty repository on purpose, the
    // most a hostile fork could ask (remove everything), so the binding is what refuses it.
    const run = await cli(['apply', '--allow-empty'], { emulator: emulator(), cwd: other });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/source-claimed/);
    expect(since(from).some((r) => r.fault === 'list-dropped')).toBe(true);
    expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('8. the own record broken by hand (unreadable): another origin is refused, not bound', async () => {
    await applied(await repository());
    await editRecord((definition) => {
      definition.objects = 'not a map';
    });
    const other = await checkout('https://github.com/mallory/fork', { 'cortex-sync.yaml': `sourceId: ${SOURCE}\n` });
    const from = emulator().requests.length;
    // The other origin's checkout holds only its settings: an empty repository on purpose, the
    // most a hostile fork could ask (remove everything), so the binding is what refuses it.
    const run = await cli(['apply', '--allow-empty'], { emulator: emulator(), cwd: other });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/source-claimed/);
    expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('9. a managed scorecard without a manifest (a pending prune) left out of 5 lists: it stays in the record', async () => {
    const dir = await repository();
    await applied(dir);
    await rm(join(dir, '.cortex/initiatives/kill2.yaml'));
    await rm(join(dir, '.cortex/scorecards/readiness.yaml'));
    dropFromLists('readiness', 5, '/api/v1/scorecards');
    await applied(dir, '--allow-empty');
    emulator().setFaults({});
    expect(((await recordOf(SOURCE)).objects as Record<string, string[]>).scorecard).toEqual(['readiness']);
  });

  it("10. another source's record left out of one list: its scorecard is not adopted as unmanaged (ownership-conflict)", async () => {
    const theirs = await checkout('https://github.com/acme/theirs', {
      'cortex-sync.yaml': 'sourceId: theirs\n',
      '.cortex/scorecards/readiness.yaml': scorecard(),
    });
    await applied(theirs);
    const ours = await repository();
    await rm(join(ours, '.cortex/initiatives/kill2.yaml'));
    dropFromLists(inventoryTag('theirs'), 1, '/api/v1/catalog/descriptors');
    const from = emulator().requests.length;
    const run = await cli(['apply'], { emulator: emulator(), cwd: ours });
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toMatch(/managed by source `theirs`/);
    expect(run.stdout + run.stderr).not.toMatch(/not yet managed by any repository/);
    expect(since(from).filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
