/**
 * What `npm publish` would upload, checked without publishing (`scripts/check-package.mjs`, which
 * CI and the release workflow run): the command's files and its LICENSE only. A stray file left in a folder the
 * package ships (a `.env`, a `.cortex-sync/` state folder, a test, a key, a packed tarball) stays
 * out, by `package.json`'s own `files` list.
 * (No time limits: `npm pack` runs as a process, slowly on a loaded machine.)
 */
import { spawnSync } from 'node:child_process';
import { cp, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

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

    it('names an emulator or a benchmark left in dist/ by an older build', { timeout: 0 }, async () => {
      for (const file of ['dist/emulator/server.js', 'dist/bench/main.js']) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), 'x');
      }
      const run = check(dir);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/^dist\/emulator\/server\.js: the emulator or the benchmark: workspace packages/m);
      expect(run.err).toMatch(/^dist\/bench\/main\.js: the emulator or the benchmark/m);
    });
  });

  describe('installed from its files alone', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cortex-sync-published-'));
      const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      const files = (JSON.parse(packed.stdout) as [{ files: { path: string }[] }])[0].files.map((f) => f.path);
      expect(files).toContain('dist/bundle/cli.js');
      for (const file of files) await cp(join(ROOT, file), join(dir, 'package', file));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });
    const run = (args: string[]) =>
      spawnSync(process.execPath, [join(dir, 'package', 'bin', 'cortex-sync.js'), ...args], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, NO_COLOR: '1', CORTEX_API_KEY: 'k' },
      });

    it('holds neither the emulator nor the benchmark, and validates manifests without them', { timeout: 0 }, () => {
      const validate = run(['validate', '--dir', join(ROOT, 'examples')]);
      expect(validate.stderr).toBe('');
      expect(validate.status).toBe(0);
    });

    it('says, for `cortex-sync emulator`, to run it from a clone of the repository', { timeout: 0 }, () => {
      const emulator = run(['emulator', '--port', '0']);
      expect(emulator.stdout).toBe('');
      expect(emulator.stderr).toMatch(
        /^error: the emulator is not part of the published cortex-sync: run `cortex-sync emulator` from a clone of its repository, after `npm ci` there/,
      );
      expect(emulator.status).toBe(1);
    });
  });
});
