/**
 * `--strict` (`CORTEX_SYNC_STRICT=true`, `strict: true` in cortex-sync.yaml) makes every warning an
 * error: `validate` fails, `plan` fails, `apply` writes nothing. `--no-strict` beats the file.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

const env = { CORTEX_SYNC_SOURCE_ID: 'strict', NO_COLOR: '1' };
const writes = (from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));
/** A service whose `x-cortex-description` the API drops: a warning at line 6. */
const warned = (tag: string) => `${serviceYaml(tag)}  x-cortex-description: dropped\n`;
const MADE_AN_ERROR =
  'cortex.yaml:6:3: error: info.x-cortex-description: unknown Cortex key; the API silently drops it';

describe('--strict', () => {
  it('validate: a warning passes without it and fails with it, naming file:line', async () => {
    await writeFiles(dir, { 'cortex.yaml': warned('strict-validate') });
    const lenient = await cli(['validate'], { cwd: dir, env });
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toContain('warning: info.x-cortex-description');

    const strict = await cli(['validate', '--strict'], { cwd: dir, env });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(MADE_AN_ERROR);
    expect(strict.stderr).toContain('(a warning; strict mode makes it an error)');
  });

  it('with zero warnings changes nothing: validate and plan pass', async () => {
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('strict-clean') });
    const validate = await cli(['validate', '--strict'], { cwd: dir, env });
    expect(validate.code).toBe(0);
    expect(validate.stdout).toContain('OK: 1 object in 1 file.');
    const plan = await cli(['plan', '--strict'], { cwd: dir, emulator, env });
    expect(plan.code).toBe(0);
  });

  it('plan fails and apply writes nothing on a warning', async () => {
    await writeFiles(dir, { 'cortex.yaml': warned('strict-apply') });
    const plan = await cli(['plan', '--strict'], { cwd: dir, emulator, env });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(MADE_AN_ERROR);
    const before = emulator.requests.length;
    const apply = await cli(['apply', '--strict', '--auto-approve'], { cwd: dir, emulator, env });
    expect(apply.code).toBe(1);
    expect(writes(before)).toEqual([]);
  });

  it('CORTEX_SYNC_STRICT=true and strict: true in cortex-sync.yaml do the same; --no-strict beats both', async () => {
    await writeFiles(dir, { 'cortex.yaml': warned('strict-env') });
    expect((await cli(['validate'], { cwd: dir, env: { ...env, CORTEX_SYNC_STRICT: 'true' } })).code).toBe(1);
    await writeFiles(dir, { 'cortex-sync.yaml': 'strict: true\n' });
    const fromFile = await cli(['validate'], { cwd: dir, env });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain(MADE_AN_ERROR);
    expect((await cli(['validate', '--no-strict'], { cwd: dir, env })).code).toBe(0);
    const bad = await cli(['validate'], { cwd: dir, env: { ...env, CORTEX_SYNC_STRICT: 'yes' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("CORTEX_SYNC_STRICT: expected true or false, got 'yes'");
  });
});
