/** validate, plan and apply each say what they looked for when the layout is wrong or empty. */
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

const env = { CORTEX_SYNC_SOURCE_ID: 'layout-warnings' };

describe('an empty or wrong directory', () => {
  it.each([['validate'], ['plan'], ['apply']])('%s fails, naming where it looked and what for', async (command) => {
    const run = await cli([command], { cwd: dir, emulator, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: no manifests found in ${dir}: looked for cortex.yaml / cortex.yml files`);
  });

  it.each([['validate'], ['plan'], ['apply']])('%s --allow-empty warns instead', async (command) => {
    const run = await cli([command, '--allow-empty'], { cwd: dir, emulator, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: no manifests found in ${dir}: looked for cortex.yaml / cortex.yml files`);
  });

  it.each([['validate'], ['plan'], ['apply']])(
    '%s refuses a Cortex.yaml and warns about cortex/catalog/',
    async (command) => {
      await writeFiles(dir, {
        'svc/Cortex.yaml': serviceYaml('layout-upper'),
        'cortex/catalog/a.yaml': serviceYaml('layout-nodot'),
      });
      const run = await cli([command], { cwd: dir, emulator, env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('svc/Cortex.yaml:1:1: error: svc/Cortex.yaml is not read');
      expect(run.stderr).toContain('warning: cortex/catalog/ holds 1 YAML file that is not read');
    },
  );
});
