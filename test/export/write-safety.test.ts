/**
 * Writes never leave `--out`: a symlinked `.cortex`, a symlinked subfolder or a symlinked target
 * file is refused before anything is written, with `--force` too. And `--only all` writes only
 * what no repository manages and what this source id manages, unless asked for more.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { listFiles, seedWorkspace } from './helpers.js';

let emulator: Emulator;
const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await tempDir('cortex-sync-export-');
  dirs.push(dir);
  return dir;
};
const exportTo = (out: string, extra: string[] = []) => cli(['export', '--out', out, ...extra], { emulator, cwd: out });

beforeEach(async () => {
  emulator = await startTestEmulator();
  await seedWorkspace(emulator);
});
afterEach(async () => {
  await emulator.stop();
  for (const dir of dirs.splice(0)) await removeDir(dir);
});

describe('export never writes outside --out', () => {
  it('DIR/.cortex a symlink to a folder outside: refused, nothing written on either side', async () => {
    const out = await newDir();
    const elsewhere = await newDir();
    await symlink(elsewhere, join(out, '.cortex'));
    const run = await exportTo(out, ['--source-id', 'repo-a']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /cannot be written safely into .*: \.cortex is a symlink; export writes only into real folders\. Nothing was written/s,
    );
    expect(await listFiles(elsewhere)).toEqual([]);
    expect(await listFiles(out)).toEqual([]);
  });

  it('a reason shared by many files is said once, and a FIFO in the way is not called a way out of --out', async () => {
    const out = await newDir();
    await mkdir(join(out, '.cortex'));
    execFileSync('mkfifo', [join(out, '.cortex/catalog')]);
    const run = await exportTo(out, ['--source-id', 'repo-a']);
    expect(run.code).toBe(1);
    const line = run.stderr.trim().split('\n').pop() ?? '';
    expect(line).toMatch(
      /^error: \d+ files to export cannot be written safely into .*: \.cortex\/catalog is a FIFO \(named pipe\), not a folder\. Nothing was written$/,
    );
    expect(line.split('FIFO')).toHaveLength(2);
  });

  it('names an --out holding a backslash, and the files in the way, escaped once', async () => {
    const out = join(await newDir(), 'out\\put');
    await mkdir(out);
    await mkdir(join(out, '.cortex/catalog'), { recursive: true });
    await writeFile(join(out, '.cortex/catalog/ledger.yaml'), 'not: a manifest of ledger\n');
    const run = await exportTo(out, ['--source-id', 'repo-a']);
    expect(run.code).toBe(1);
    const line = run.stderr.trim().split('\n').pop() ?? '';
    expect(line).toMatch(/exists? already in \S*\/out\\\\put: /);
    expect(line).not.toContain('\\\\\\\\');
  });

  it('a symlinked subfolder (.cortex/catalog) is refused, with --force too', async () => {
    const out = await newDir();
    const elsewhere = await newDir();
    await mkdir(join(out, '.cortex'));
    await symlink(elsewhere, join(out, '.cortex/catalog'));
    for (const extra of [[], ['--force']]) {
      const run = await exportTo(out, ['--source-id', 'repo-a', ...extra]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('.cortex/catalog is a symlink');
    }
    expect(await listFiles(elsewhere)).toEqual([]);
  });

  it('a symlinked target file is refused with --force, and the file it points at is untouched', async () => {
    const out = await newDir();
    const elsewhere = await newDir();
    await writeFile(join(elsewhere, 'victim'), 'keep me\n');
    await mkdir(join(out, '.cortex/catalog'), { recursive: true });
    await symlink(join(elsewhere, 'victim'), join(out, '.cortex/catalog/ledger.yaml'));
    const run = await exportTo(out, ['--source-id', 'repo-a', '--force']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.cortex/catalog/ledger.yaml is a symlink; export never writes through one');
    expect(await readFile(join(elsewhere, 'victim'), 'utf8')).toBe('keep me\n');
    expect((await listFiles(out)).filter((f) => !f.startsWith('.cortex/catalog/ledger'))).toEqual([]);
  });
});

describe('--only all and other sources', () => {
  it('leaves out what another source id manages unless --include-other-sources', async () => {
    const managed = await newDir();
    expect((await exportTo(managed, ['--source-id', 'repo-a', '--kinds', 'entity'])).code).toBe(0);
    expect((await cli(['apply', '--dir', managed], { emulator, cwd: managed })).code).toBe(0);

    const mine = await newDir();
    const run = await exportTo(mine, ['--source-id', 'repo-b', '--kinds', 'entity']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /Left out \d+ objects? other source ids manage \(`repo-a`\); pass --include-other-sources/,
    );
    expect((await listFiles(mine)).filter((f) => f.startsWith('.cortex/'))).toEqual([]);

    const same = await newDir();
    expect((await exportTo(same, ['--source-id', 'repo-a', '--kinds', 'entity'])).code).toBe(0);
    expect(await listFiles(same)).toContain('.cortex/catalog/ledger.yaml');

    const asked = await newDir();
    expect(
      (await exportTo(asked, ['--source-id', 'repo-b', '--kinds', 'entity', '--include-other-sources'])).code,
    ).toBe(0);
    expect(await listFiles(asked)).toContain('.cortex/catalog/ledger.yaml');
  });
});
