/**
 * Manifests are never ignored without a word: a YAML file under .cortex/ that no kind reads is an
 * error naming the folder it probably meant (so a typo'd folder cannot turn into a prune), and a
 * --dir holding YAML files but no manifest gets a warning naming the layout.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
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

const template = (tag: string) => `tag: ${tag}
name: ${tag}
type: COOKIECUTTER
repoLocator:
  type: GITHUB
  org: example
  repoName: ${tag}
  url: https://github.com/example/${tag}
`;

describe('YAML files no kind reads', () => {
  it('a template moved into .cortex/scaffolder/ is an error with the right folder, and --prune plans no delete', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'typo-folder' };
    await writeFiles(dir, {
      'svc/cortex.yaml': serviceYaml('typo-folder-svc'),
      '.cortex/scaffolders/typo-template.yaml': template('typo-template'),
    });
    expect((await cli(['apply', '--plan-log', 'log.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    await rename(join(dir, '.cortex/scaffolders'), join(dir, '.cortex/scaffolder'));
    const before = emulator.requests.length;
    const run = await cli(['apply', '--prune', '--allow-mass-delete', '--plan-log', 'log2.jsonl'], {
      cwd: dir,
      emulator,
      env,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.cortex/scaffolder/typo-template.yaml');
    expect(run.stderr).toContain('did you mean `.cortex/scaffolders/`?');
    expect(run.stdout).not.toContain('delete scaffolder-template/typo-template');
    expect(emulator.requests.slice(before).filter((r) => r.method !== 'GET')).toEqual([]);
    const validate = await cli(['validate'], { cwd: dir });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/\.cortex\/scaffolder\/typo-template\.yaml:1:1: error: .*unowned-manifest/);
  });

  it('.cortex/catalogs/ suggests .cortex/catalog/', async () => {
    await writeFiles(dir, { '.cortex/catalogs/alpha.yaml': serviceYaml('alpha') });
    const run = await cli(['validate'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('did you mean `.cortex/catalog/`?');
  });

  it('a Scaffolder template in .cortex/catalog/: a hint naming the folder it belongs in', async () => {
    await writeFiles(dir, { '.cortex/catalog/go-template.yaml': template('go-template') });
    const run = await cli(['validate'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      '.cortex/catalog/go-template.yaml reads as a valid scaffolder-template manifest, but no entity manifest: move it to .cortex/scaffolders/',
    );
  });

  it('--dir with YAML files but no manifest: an error naming the layout instead of a silent "0 objects"', async () => {
    await writeFiles(dir, { 'catalog/alpha.yaml': serviceYaml('alpha') });
    const run = await cli(['validate', '--dir', 'catalog'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/error: no manifests found, but 1 YAML file no kind reads: alpha\.yaml/);
    expect(run.stderr).toContain('cortex.yaml');
  });
});
