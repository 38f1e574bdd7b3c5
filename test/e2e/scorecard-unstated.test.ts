/**
 * A scorecard write replaces the whole scorecard. A field the manifest no longer states (a removed
 * `draft: true`, removed `notifications`) is kept at its live value, and the plan says so: what
 * the apply writes is what the plan showed, never a published draft the plan left out.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { parse } from 'yaml';
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
let dir: string;

const descriptor = async (tag: string): Promise<Record<string, unknown>> => {
  const res = await fetch(`${emulator.url}/api/v1/scorecards/${tag}/descriptor`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  const body = (await res.json()) as unknown;
  return (typeof body === 'string' ? parse(body) : body) as Record<string, unknown>;
};

beforeEach(async () => {
  emulator = await startTestEmulator();
  dir = await tempDir();
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

it('a removed draft and notifications are kept as live, shown in the plan, and written as shown', async () => {
  await writeFiles(dir, {
    'cortex-sync.yaml': 'sourceId: cards\n',
    '.cortex/scorecards/ready.yaml':
      'tag: ready\nname: Ready\ndescription: first\ndraft: true\nnotifications:\n  enabled: false\n  scoreDropNotificationsEnabled: true\nladder:\n  name: Steps\n  levels: [{name: Gold, rank: 1, color: "#FFD700"}]\nrules:\n  - {expression: git != null, level: Gold, weight: 3, title: Has git}\n',
  });
  expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);

  await writeFiles(dir, {
    '.cortex/scorecards/ready.yaml':
      'tag: ready\nname: Ready\ndescription: second\nladder:\n  levels: [{name: Gold, rank: 1}]\nrules:\n  - {expression: git != null, level: Gold}\n',
  });
  const plan = await cli(['plan', '--dir', '.'], { emulator, cwd: dir });
  expect(plan.code).toBe(0);
  expect(plan.stdout).toMatch(/description: "first" → "second"/);
  expect(plan.stdout).toMatch(
    /keeps as live what the manifest leaves out: draft: true, notifications\.enabled: false, notifications\.scoreDropNotificationsEnabled: true/,
  );
  expect(plan.stdout).toMatch(/ladder\.name: "Steps"/);
  const json = await cli(['plan', '--dir', '.', '--output', 'json'], { emulator, cwd: dir });
  expect(json.stdout).toMatch(/keeps as live what the manifest leaves out: draft: true/);

  const from = emulator.requests.length;
  const applied = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
  expect(applied.code).toBe(0);
  const posts = writesSince(emulator, from).filter((r) => r.path === '/api/v1/scorecards/descriptor');
  expect(posts).toHaveLength(1);
  const live = await descriptor('ready');
  expect(live).toMatchObject({
    description: 'second',
    draft: true,
    notifications: { enabled: false, scoreDropNotificationsEnabled: true },
    ladder: { name: 'Steps', levels: [{ name: 'Gold', rank: 1, color: '#FFD700' }] },
  });
  expect((live.rules as Record<string, unknown>[])[0]).toMatchObject({ weight: 3, title: 'Has git' });
  expect((await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: dir })).code).toBe(0);
});

it('a rule diff names a rule whose expression holds a backslash with each backslash escaped once, in text and Markdown', async () => {
  const card = (weight: number): string =>
    `tag: regex\nname: Regex\nrules:\n  - expression: 'custom("v").matches("\\\\d+\\\\.x")'\n    weight: ${weight}\n`;
  await writeFiles(dir, { 'cortex-sync.yaml': 'sourceId: cards\n', '.cortex/scorecards/regex.yaml': card(1) });
  expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
  await writeFiles(dir, { '.cortex/scorecards/regex.yaml': card(2) });
  // The expression is `custom("v").matches("\\d+\\.x")`; as a JSON string key: `"custom(\"v\").matches(\"\\\\d+\\\\.x\")"`.
  const key = String.raw`rules["custom(\"v\").matches(\"\\\\d+\\\\.x\")"].weight`;
  const text = await cli(['plan', '--dir', '.'], { emulator, cwd: dir });
  expect(text.stdout).toContain(`~ ${key}: 1 → 2`);
  const markdown = await cli(['plan', '--dir', '.', '--output', 'markdown'], { emulator, cwd: dir });
  expect(markdown.stdout).toContain(key);
});
