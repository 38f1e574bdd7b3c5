/**
 * The last line of `validate` counts what it says: its errors, the manifest files it read, and
 * the paths it found but could not read as manifests (a FIFO, a socket, a dangling symlink, a
 * layout folder that is a file), each count with its noun in the right number.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, removeDir, serviceYaml, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

const validate = async (): Promise<{ code: number; stderr: string; last: string }> => {
  const run = await cli(['validate', '--dir', '.'], { cwd: dir });
  return { code: run.code, stderr: run.stderr, last: lastLine(run.stderr) };
};

describe('the summary of validate', () => {
  it('a FIFO where a manifest would be: 1 path that could not be read, not "in 0 files"', async () => {
    await mkdir(join(dir, '.cortex/catalog'), { recursive: true });
    execFileSync('mkfifo', [join(dir, '.cortex/catalog/svc.yaml')]);
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.cortex/catalog/svc.yaml is not a regular file');
    expect(run.last).toBe('1 error in 1 file; 0 manifest files read, 1 path could not be read.');
  });

  it('a unix socket and a dangling symlink beside a manifest read: both counts, each in the right number', async () => {
    await writeFiles(dir, { '.cortex/catalog/good.yaml': serviceYaml('good') });
    await symlink('gone.yaml', join(dir, '.cortex/catalog/dangling.yaml'));
    const socket = createServer();
    await new Promise<void>((resolve) => socket.listen(join(dir, '.cortex/catalog/sock.yaml'), resolve));
    try {
      const run = await validate();
      expect(run.code).toBe(1);
      expect(run.last).toBe('2 errors in 2 files; 1 manifest file read, 2 paths could not be read.');
    } finally {
      await new Promise((resolve) => socket.close(resolve));
    }
  });

  it('a .cortex/catalog that is a regular file is an error naming it, not "OK: 0 objects"', async () => {
    await mkdir(join(dir, '.cortex'));
    await writeFile(join(dir, '.cortex/catalog'), 'services/\n');
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^\.cortex\/catalog:1:1: error: \.cortex\/catalog is not a folder/m);
    expect(run.stderr).not.toContain('no manifests found');
    expect(run.last).toBe('1 error in 1 file; 0 manifest files read, 1 path could not be read.');
  });

  it('a .cortex that is a regular file is an error naming it', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('svc'), '.cortex': 'catalog/\n' });
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^\.cortex:1:1: error: \.cortex is not a folder/m);
    expect(run.last).toBe('1 error in 1 file; 1 manifest file read, 1 path could not be read.');
  });

  it('counts only the files read when every path was read', async () => {
    await writeFiles(dir, { 'a/cortex.yaml': serviceYaml('a'), 'b/cortex.yaml': 'info: {}\n' });
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.last).toMatch(/^\d+ errors? in 1 file; 2 manifest files read\.$/);
  });

  it('counts the files that have errors, not the manifests read (many files no kind reads beside a few manifests)', async () => {
    await writeFiles(dir, {
      'a/cortex.yaml': serviceYaml('a'),
      '.cortex/catalogs/b.yaml': serviceYaml('b'),
      '.cortex/catalogs/c.yaml': serviceYaml('c'),
      '.cortex/catalogs/d.yaml': serviceYaml('d'),
    });
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.last).toBe('3 errors in 3 files; 1 manifest file read.');
  });

  it('an error of no file (an empty root) is counted without a file', async () => {
    const run = await validate();
    expect(run.code).toBe(1);
    expect(run.last).toBe('1 error; 0 manifest files read.');
  });
});
