/**
 * A manifest root holding no manifest is an error (Terraform's "No configuration files"): a
 * mistyped `--dir` or `dir:` must not pass as "OK: 0 objects" or "No changes". `--allow-empty`
 * says the repository is empty on purpose (to prune everything the source manages, still behind
 * the mass-delete guard). Against the emulator on 127.0.0.1.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
  return () => removeDir(dir);
});

const writesSince = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');
const NO_MANIFESTS = /error: no manifests found in .*catalog.*--allow-empty.*\[no-manifests\]/s;

describe('a manifest root with no manifest', () => {
  for (const command of ['validate', 'plan', 'apply'])
    it(`${command}: exit 1 with no-manifests, nothing sent`, async () => {
      await writeFiles(dir, { 'catalog/README.md': 'nothing here\n' });
      const before = emulator.requests.length;
      const run = await cli([command, '--dir', 'catalog'], {
        cwd: dir,
        emulator,
        env: { CORTEX_SYNC_SOURCE_ID: 'empty-root' },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(NO_MANIFESTS);
      expect(run.stdout).not.toMatch(/OK: 0 objects|No changes/);
      expect(emulator.requests.length).toBe(before);
    });

  it('validate --output json: valid false, the diagnostic an error', async () => {
    const run = await cli(['validate', '--output', 'json'], { cwd: dir });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as { valid: boolean; diagnostics: { severity: string; code: string }[] };
    expect(report.valid).toBe(false);
    expect(report.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', code: 'no-manifests' }));
  });

  it('only YAML no kind reads: an error naming the files', async () => {
    await writeFiles(dir, { 'catalog/alpha.yaml': serviceYaml('alpha'), 'catalog/ci.yml': 'on: push\n' });
    const run = await cli(['validate', '--dir', 'catalog'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: no manifests found, but 2 YAML files no kind reads: alpha\.yaml, ci\.yml/);
    expect(run.stderr).toContain('--allow-empty');
  });

  it('a --dir that does not exist, or is a file: a clear error, nothing sent', async () => {
    const before = emulator.requests.length;
    const missing = await cli(['plan', '--dir', 'catlog'], { cwd: dir, emulator });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--dir .*catlog does not exist/);
    await writeFile(join(dir, 'file.yaml'), 'x: 1\n');
    const file = await cli(['apply', '--dir', 'file.yaml'], { cwd: dir, emulator });
    expect(file.code).toBe(1);
    expect(file.stderr).toMatch(/--dir .*file\.yaml is a file, not a folder/);
    expect(emulator.requests.length).toBe(before);
  });
});

describe('--allow-empty', () => {
  it('validate and plan pass on a deliberate empty repository (a warning remains)', async () => {
    const validate = await cli(['validate', '--allow-empty'], { cwd: dir });
    expect(validate.code).toBe(0);
    expect(validate.stderr).toMatch(/warning: no manifests found/);
    const plan = await cli(['plan', '--allow-empty'], { cwd: dir, emulator });
    expect(plan.code).toBe(0);
  });

  it('pruning everything a source manages stays behind the mass-delete guard', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'empty-on-purpose' };
    await writeFiles(dir, { 'a/cortex.yaml': serviceYaml('empty-a'), 'b/cortex.yaml': serviceYaml('empty-b') });
    expect((await cli(['apply', '--plan-log', 'l.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    await removeDir(join(dir, 'a'));
    await removeDir(join(dir, 'b'));
    const before = emulator.requests.length;
    const refused = await cli(['apply', '--prune', '--plan-log', 'l.jsonl'], { cwd: dir, emulator, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/no-manifests/);
    const guarded = await cli(['apply', '--prune', '--allow-empty', '--plan-log', 'l.jsonl'], {
      cwd: dir,
      emulator,
      env,
    });
    expect(guarded.code).toBe(1);
    expect(`${guarded.stdout}${guarded.stderr}`).toMatch(/mass-delete|--allow-mass-delete/);
    expect(writesSince(before)).toEqual([]);
    const pruned = await cli(['apply', '--prune', '--allow-empty', '--allow-mass-delete', '--plan-log', 'l.jsonl'], {
      cwd: dir,
      emulator,
      env,
    });
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toMatch(/2 to (archive|delete)|archive entity\/empty-a/);
  });
});
