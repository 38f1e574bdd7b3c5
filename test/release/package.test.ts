/**
 * What `npm publish` would upload, checked without publishing (`scripts/check-package.mjs`, which
 * CI and the release workflow run): the command's files and its LICENSE only. A stray file left in a folder the
 * package ships (a `.env`, a `.cortex-sync/` state folder, a test, a key, a packed tarball) stays
 * out, by `package.json`'s own `files` list.
 * (No time limits: `npm pack` runs as a process, slowly on a loaded machine.)
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CHECK = join(ROOT, 'scripts', 'check-package.mjs');

const check = (dir?: string) => {
  const run = spawnSync(process.execPath, [CHECK, ...(dir ? [dir] : [])], { cwd: ROOT, encoding: 'utf8' });
  return { code: run.status, out: run.stdout, err: run.stderr };
};

describe('the npm package', () => {
  it(
    "of this repository holds bin, dist, schemas and the LICENSE, and the Action's bundle is committed",
    { timeout: 0 },
    () => {
      const run = check();
      expect(run.err).toBe('');
      expect(run.out).toMatch(/^cortex-sync@\d+\.\d+\.\d+: \d+ files, .*bin, dist, schemas only\.$/m);
      expect(run.code).toBe(0);
    },
  );

  describe('with stray files in the folders it ships', () => {
    let dir: string;
    const STRAY = [
      'dist/.env',
      'bin/.env.production',
      'dist/.cortex-sync/state.json',
      'dist/cli/main.test.js',
      'dist/keys/deploy.pem',
      'dist/cortex-sync-0.1.0.tgz',
    ];
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cortex-sync-package-'));
      await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
      const files = ['LICENSE', 'bin/cortex-sync.js', 'dist/bundle/cli.js', 'dist/watch/healthcheck-main.js'];
      for (const file of [...files, 'schemas/entity.schema.json', ...STRAY]) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), file.endsWith('.json') ? '{}' : 'x');
      }
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('leaves them out', { timeout: 0 }, () => {
      const run = check(dir);
      expect(run.err).toBe('');
      expect(run.out).toMatch(/: 6 files, /); // package.json, LICENSE, bin, the two dist files, the schema
      expect(run.code).toBe(0);
    });

    it('is refused without its LICENSE (the MIT terms must travel with the code)', { timeout: 0 }, async () => {
      await rm(join(dir, 'LICENSE'));
      const run = check(dir);
      expect(run.err).toMatch(/^LICENSE: missing/m);
      expect(run.code).toBe(1);
    });

    it('names each one that a `files` list without the exclusions would let in', { timeout: 0 }, async () => {
      await writeFile(
        join(dir, 'package.json'),
        JSON.stringify({
          name: 'cortex-sync',
          version: '0.0.0',
          bin: { 'cortex-sync': 'bin/cortex-sync.js' },
          files: ['bin', 'dist', 'schemas'],
        }),
      );
      const run = check(dir);
      expect(run.code).toBe(1);
      for (const file of STRAY) expect(run.err).toContain(`${file}: `);
      expect(run.err).toMatch(/dist\/\.cortex-sync\/state\.json: local state/);
      expect(run.err).toMatch(/dist\/keys\/deploy\.pem: a key file/);
    });
  });
});
