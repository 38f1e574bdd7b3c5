/**
 * A scorecard that Initiatives outside this plan still name (another source's, one made in the
 * UI) is kept by a prune, and the plan says which Initiatives hold it: deleting it would refuse
 * every later plan of those sources (`unknown scorecard`).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  API_KEY,
  cli,
  type Emulator,
  removeDir,
  startTestEmulator,
  tempDir,
  writeFiles,
  writesSince,
} from './harness.js';

let emulator: Emulator;
const dirs: string[] = [];

const repo = async (files: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, files);
  return dir;
};

const scorecard = (tag: string): string =>
  `tag: ${tag}\nname: ${tag}\nrules:\n  - title: Has git\n    expression: git != null\n`;
const initiative = (name: string, tag: string): string =>
  `name: ${name}\nscorecardTag: ${tag}\ntargetDate: "2099-12-31"\nisDraft: false\nemphasizedRules: [{expression: git != null}]\n`;

const scorecardExists = async (tag: string): Promise<boolean> => {
  const res = await fetch(`${emulator.url}/api/v1/scorecards/${encodeURIComponent(tag)}/descriptor`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return res.status === 200;
};

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

it("keeps a pruned scorecard that another source's Initiative and a UI-made one name, saying which; prunes it once none does", async () => {
  const owner = await repo({
    'cortex-sync.yaml': 'sourceId: scorecards-repo\n',
    '.cortex/scorecards/shared.yaml': scorecard('shared'),
    '.cortex/scorecards/other.yaml': scorecard('other'),
  });
  expect((await cli(['apply', '--dir', '.'], { emulator, cwd: owner })).code).toBe(0);
  const user = await repo({
    'cortex-sync.yaml': 'sourceId: initiatives-repo\n',
    '.cortex/initiatives/q.yaml': initiative('Q4 push', 'shared'),
  });
  expect((await cli(['apply', '--dir', '.'], { emulator, cwd: user })).code).toBe(0);
  const ui = await fetch(`${emulator.url}/api/v1/initiatives`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Made in the UI',
      scorecardTag: 'shared',
      targetDate: '2099-12-31',
      isDraft: true,
      emphasizedLevels: [],
      emphasizedRules: [{ expression: 'git != null' }],
    }),
  });
  expect(ui.status).toBe(200);

  await rm(join(owner, '.cortex/scorecards/shared.yaml'));
  const plan = await cli(['plan', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: owner });
  expect(plan.code).toBe(0);
  expect(plan.stderr + plan.stdout).toMatch(/prune-kept/);
  expect(plan.stderr + plan.stdout).toMatch(/`Made in the UI`/);
  expect(plan.stderr + plan.stdout).toMatch(/`Q4 push`/);
  const from = emulator.requests.length;
  const applied = await cli(['apply', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: owner });
  expect(applied.code).toBe(0);
  expect(writesSince(emulator, from).filter((r) => r.method === 'DELETE')).toEqual([]);
  expect(await scorecardExists('shared')).toBe(true);
  // The other source's plans still pass.
  expect((await cli(['plan', '--dir', '.'], { emulator, cwd: user })).code).toBe(0);

  // Once no Initiative names it, the prune deletes it.
  await rm(join(user, '.cortex/initiatives/q.yaml'));
  await writeFiles(user, { '.cortex/initiatives/r.yaml': initiative('Q1 push', 'other') });
  expect((await cli(['apply', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: user })).code).toBe(0);
  const cid = emulator.state.initiatives.items.find((i) => i.name === 'Made in the UI')?.cid;
  const gone = await fetch(`${emulator.url}/api/v1/initiatives/${cid ?? ''}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  expect(gone.status).toBeLessThan(300);
  const last = await cli(['apply', '--dir', '.', '--prune', '--allow-mass-delete'], { emulator, cwd: owner });
  expect(last.code).toBe(0);
  expect(await scorecardExists('shared')).toBe(false);
  expect(await scorecardExists('other')).toBe(true);
});
