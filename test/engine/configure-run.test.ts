/**
 * One place builds every runtime's configuration (`configureRun`): what the operator said beats
 * the environment and the file, `false` included, whichever runtime said it; an Action input is
 * named as one; what was not said (an empty input) is not a "no". One check asks for the key, in
 * the words of the surface that takes it. The watcher takes `--no-prune` like the CLI.
 */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { requireApiKey } from '../../src/engine/api-client.js';
import { configureRun } from '../../src/engine/config.js';
import { removeDir, tempDir, writeFiles } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
  await writeFiles(dir, { 'cortex-sync.yaml': 'sourceId: from-file\nprune: true\n' });
});
afterEach(() => removeDir(dir));

const ENV = { CORTEX_SYNC_PRUNE: 'true', CORTEX_API_KEY: 'env-key-0123456789' };

describe('configureRun', () => {
  it("a 'no' said by the operator beats the environment and the file, named as a flag or as an input", async () => {
    const flag = await configureRun({ said: { dir, prune: false } }, ENV, dir);
    expect(flag.config.prune).toBe(false);
    expect(flag.config.origins?.prune).toEqual({ origin: 'flag', name: '--no-prune' });

    const input = await configureRun({ said: { dir, prune: false }, from: 'input' }, ENV, dir);
    expect(input.config.prune).toBe(false);
    expect(input.config.flagsAre).toBe('input');
  });

  it('what was not said (undefined, an empty input) leaves the environment and the file in charge', async () => {
    const { config } = await configureRun({ said: { dir, prune: undefined, sourceId: '', baseUrl: '' } }, ENV, dir);
    expect(config.prune).toBe(true);
    expect(config.origins?.prune.origin).toBe('environment');
    expect(config.sourceId).toBe('from-file');
    expect(config.baseUrl).toBe('https://api.getcortexapp.com');
  });

  it('a key given as a setting (the Action input) is the key, and both forms of it at once is an error', async () => {
    const given = await configureRun({ said: { dir }, from: 'input', apiKey: 'input-key-0123456789' }, {}, dir);
    expect(given.config.apiKey).toBe('input-key-0123456789');
    const both = await configureRun(
      { said: { dir }, from: 'input', apiKey: 'input-key-0123456789' },
      { CORTEX_API_KEY_FILE: join(dir, '..', 'key') },
      dir,
    );
    expect(both.diagnostics.map((d) => d.message).join('\n')).toMatch(/both CORTEX_API_KEY and CORTEX_API_KEY_FILE/);
  });
});

describe('requireApiKey', () => {
  it('names the place of the key each surface takes, and why it is needed', () => {
    expect(requireApiKey({ apiKey: 'k' }, 'x')).toBe('k');
    expect(() => requireApiKey({}, 'export reads the live workspace')).toThrow(
      'CORTEX_API_KEY (or CORTEX_API_KEY_FILE) is not set: export reads the live workspace',
    );
    expect(() => requireApiKey({ flagsAre: 'input' }, 'plan and apply read the live workspace')).toThrow(
      'the `api-key` input is not set: plan and apply read the live workspace',
    );
  });
});

describe('watch --no-prune', () => {
  it('is a flag of watch, as of plan and apply', async () => {
    let out = '';
    const stdout = new Writable({
      write(chunk: Buffer, _enc, callback) {
        out += chunk.toString('utf8');
        callback();
      },
    });
    const code = await runCli(['watch', '--help'], { stdout, stderr: stdout, env: {}, cwd: dir });
    expect(code).toBe(0);
    expect(out).toMatch(/--no-prune\s+never prune/);
  });
});
