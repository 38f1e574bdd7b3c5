/**
 * Golden output: `examples/` applied to a fresh emulator, then exported, gives exactly the files
 * committed under `golden/` (names and bytes), and `plan` on them has nothing to do. After an
 * intended change of the output, regenerate with CORTEX_SYNC_UPDATE_GOLDEN=1 and review the diff.
 */
import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cli, copyExamples, type Emulator, removeDir, startTestEmulator, tempDir } from '../../e2e/harness.js';
import { type PlanJson, readTree } from '../../export/helpers.js';

const GOLDEN = join(import.meta.dirname, 'golden');

let emulator: Emulator;
let examples: string;
let out: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  // The workspace holds only what examples/ applies: not the emulator's sample scorecards.
  emulator.state.scorecards.items = [];
  examples = await copyExamples();
  out = await tempDir('cortex-sync-export-golden-');
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(examples);
  await removeDir(out);
});

/** `examples/` and the exported folder are two checkouts of one repository: one origin, set by the operator. */
const env = { CORTEX_SYNC_ORIGIN: 'github.com/acme/example-catalog' };

it('exports examples/ byte for byte as committed, and the plan on it is empty', async () => {
  const applied = await cli(['apply', '--dir', examples], { emulator, cwd: examples, env });
  expect(applied.code).toBe(0);
  const run = await cli(['export', '--out', out, '--source-id', 'example-catalog'], { emulator, cwd: out });
  expect(run.stderr).not.toMatch(/error/i);
  expect(run.code).toBe(0);

  if (process.env.CORTEX_SYNC_UPDATE_GOLDEN === '1') {
    await rm(GOLDEN, { recursive: true, force: true });
    await cp(out, GOLDEN, { recursive: true });
  }
  const actual = await readTree(out);
  const golden = await readTree(GOLDEN);
  expect([...actual.keys()]).toEqual([...golden.keys()]);
  for (const [file, text] of golden) expect(actual.get(file), file).toBe(text);

  const plan = await cli(['plan', '--dir', out, '--output', 'json', '--detailed-exitcode'], {
    emulator,
    cwd: out,
    env,
  });
  expect(plan.code).toBe(0);
  const parsed = JSON.parse(plan.stdout) as PlanJson;
  expect(parsed.changes.filter((c) => c.action !== 'noop')).toEqual([]);
  // The same objects as the repository that made the workspace.
  const source = await cli(['plan', '--dir', examples, '--output', 'json'], { emulator, cwd: examples, env });
  expect(parsed.summary.noop).toBe((JSON.parse(source.stdout) as PlanJson).summary.noop);
});
