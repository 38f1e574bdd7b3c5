/**
 * `export` never fails whole on one object it cannot write as a valid manifest (an entity whose
 * tag is `.` or only dots, a laddered scorecard whose rules have no level): it skips it with a
 * reason line, writes the rest, and every file it writes passes its own `validate`.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { callApi, readTree, seedWorkspace } from './helpers.js';

let emulator: Emulator;
let out: string;

const service = (tag: string): string =>
  `openapi: 3.0.1\ninfo:\n  title: T\n  x-cortex-tag: "${tag}"\n  x-cortex-type: service\n`;

beforeEach(async () => {
  emulator = await startTestEmulator();
  await seedWorkspace(emulator);
  out = await tempDir('cortex-sync-export-');
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(out);
});

it('skips what it cannot write as a valid manifest, with a reason each, and writes the rest', async () => {
  for (const tag of ['.', '...']) {
    await callApi(emulator, 'POST', '/api/v1/open-api', service(tag), 'application/openapi;charset=UTF-8');
  }
  emulator.state.scorecards.items.push({
    tag: 'half-laddered',
    name: 'Half laddered',
    isDraft: false,
    levels: [{ rank: 1, name: 'Gold', color: '#FFD700' }],
    rules: [{ expression: 'git != null', levelName: 'Gold' }, { expression: 'oncall != null' }],
    lastUpdated: '2026-01-01T00:00:00Z',
  });

  const exported = await cli(['export', '--out', out, '--source-id', 'repo-a'], { emulator, cwd: out });
  expect(exported.code).toBe(0);
  expect(exported.stderr).toMatch(/Skipped entity `\.`: its identity is dots only/);
  expect(exported.stderr).toMatch(/Skipped entity `\.\.\.`: its identity is dots only/);
  expect(exported.stderr).toMatch(/Skipped scorecard `half-laddered`: .*rules\[1\].*level/);
  const files = await readTree(out);
  expect([...files.keys()].some((f) => f.includes('half-laddered'))).toBe(false);
  expect(files.has('.cortex/catalog/ledger.yaml')).toBe(true);
  const validate = await cli(['validate', '--dir', '.'], { cwd: out });
  expect(validate.stderr).not.toMatch(/error/);
  expect(validate.code).toBe(0);
});
