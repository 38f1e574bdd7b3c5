/**
 * A target date that passes never freezes the source: an unchanged live Initiative whose date has
 * passed is a warning, and only a plan that would write such an Initiative (create it, or update
 * it: Cortex refuses any write whose targetDate is not in the future) fails. Both the CLI and the
 * emulator run on one injected clock.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { systemClock } from '../../src/engine/context.js';
import { cli, type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './harness.js';

let emulator: Emulator;
let dir: string;
let now = Date.parse('2027-01-01T12:00:00Z');
/** Time moves only by the waits of the run (the lease's confirmation among them), shared with the emulator. */
const clock: Clock = {
  now: () => now,
  sleep: async (ms, signal) => {
    await systemClock.sleep(Math.min(ms, 20), signal);
    now += ms;
  },
};

const scorecard = 'tag: ready\nname: Ready\nrules:\n  - expression: git != null\n';
const initiative = (name: string, date: string, description = 'push'): string =>
  `name: ${name}\ndescription: ${description}\nscorecardTag: ready\ntargetDate: "${date}"\nisDraft: false\nemphasizedRules: [{expression: git != null}]\n`;

beforeEach(async () => {
  now = Date.parse('2027-01-01T12:00:00Z');
  emulator = await startTestEmulator({ now: () => now });
  dir = await tempDir();
  await writeFiles(dir, {
    'cortex-sync.yaml': 'sourceId: dates-repo\n',
    '.cortex/scorecards/ready.yaml': scorecard,
    '.cortex/initiatives/q.yaml': initiative('Q1 push', '2027-01-10'),
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
  });
  const first = await cli(['apply', '--dir', '.'], { emulator, cwd: dir, clock });
  expect(first.stderr).not.toMatch(/error/);
  expect(first.code).toBe(0);
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

it('the day after an unchanged live Initiative’s target date, the rest of the source still plans and applies, with a warning', async () => {
  now = Date.parse('2027-01-11T09:00:00Z');
  await writeFiles(dir, { '.cortex/catalog/b.yaml': serviceYaml('svc-b') });
  const validate = await cli(['validate', '--dir', '.'], { cwd: dir, clock });
  expect(validate.code).toBe(0);
  expect(validate.stderr).toMatch(
    /q\.yaml:4:\d+: warning: .*targetDate 2027-01-10 has passed.*\[initiative-target-date-past\]/,
  );
  const applied = await cli(['apply', '--dir', '.'], { emulator, cwd: dir, clock });
  expect(applied.code).toBe(0);
  expect(applied.stderr).toMatch(/warning: .*targetDate 2027-01-10 has passed/);
  expect(applied.stderr).not.toMatch(/error/);
  expect(applied.stdout).toMatch(/\+ create entity\/svc-b/);
  expect(emulator.state.initiatives.items.map((i) => i.targetDate)).toEqual(['2027-01-10']);
});

it('refuses a plan that would update an expired Initiative (its date unchanged) or create one with a past date, at the targetDate line', async () => {
  now = Date.parse('2027-01-11T09:00:00Z');
  await writeFiles(dir, { '.cortex/initiatives/q.yaml': initiative('Q1 push', '2027-01-10', 'a new description') });
  const update = await cli(['plan', '--dir', '.'], { emulator, cwd: dir, clock });
  expect(update.code).toBe(1);
  expect(update.stderr).toMatch(
    /q\.yaml:4:\d+: error: .*targetDate 2027-01-10 is not in the future .*this plan would update it.*\[initiative-target-date-past\]/,
  );

  await writeFiles(dir, {
    '.cortex/initiatives/q.yaml': initiative('Q1 push', '2027-01-10'),
    '.cortex/initiatives/r.yaml': initiative('Q2 push', '2027-01-11'),
  });
  const create = await cli(['plan', '--dir', '.'], { emulator, cwd: dir, clock });
  expect(create.code).toBe(1);
  expect(create.stderr).toMatch(
    /r\.yaml:4:\d+: error: .*targetDate 2027-01-11 is not in the future .*this plan would create it/,
  );
  expect(create.stderr).not.toMatch(/q\.yaml:4:\d+: error/);
});
