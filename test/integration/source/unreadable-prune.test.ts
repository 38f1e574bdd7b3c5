/**
 * A manifest that cannot be read must never look deleted: after a first apply, each way of
 * breaking one manifest makes `apply --prune` fail (exit 1) naming the file, and nothing is
 * archived or deleted. The CLI runs in-process against the emulator on 127.0.0.1.
 */
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../packages/emulator/src/server.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from '../../cli/run.js';

let emulator: RunningEmulator;
let dir: string;
let outside: string;

const SERVICES = ['svc-0', 'svc-1', 'svc-2', 'svc-3', 'svc-4', 'svc-5', 'svc-6', 'svc-7'];
const BROKEN = 'services/svc-0/cortex.yaml';

beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(async () => {
  await emulator.stop();
});
beforeEach(async () => {
  emulator.reset();
  dir = await tempDir();
  outside = await mkdtemp(join(tmpdir(), 'cortex-sync-outside-'));
  const files: Record<string, string> = {
    'cortex-sync.yaml': 'sourceId: github.com/acme/catalog\npruneEntities: delete\n',
    '.cortex/catalog/team-b/ledger.yaml': serviceYaml('ledger'),
  };
  for (const tag of SERVICES) files[`services/${tag}/cortex.yaml`] = serviceYaml(tag);
  await writeFiles(dir, files);
  const first = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
  expect(first.code, first.stderr).toBe(0);
});
afterEach(async () => {
  await chmod(join(outside, 'locked'), 0o755).catch(() => {});
  await removeDir(dir);
  await removeDir(outside);
});

const entityExists = async (tag: string): Promise<boolean> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${encodeURIComponent(tag)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (res.status === 404) return false;
  const body = (await res.json()) as { isArchived?: boolean };
  return body.isArchived !== true;
};

const replaceWith = async (rel: string, make: (path: string) => Promise<void>): Promise<void> => {
  await rm(join(dir, rel), { recursive: true, force: true });
  await mkdir(join(dir, rel, '..'), { recursive: true });
  await make(join(dir, rel));
};

/** Asserts the prune run refused, named `file`, and left every entity in place. */
const expectRefused = async (file: string): Promise<string> => {
  const run = await cli(['apply', '--dir', '.', '--prune'], { emulator, cwd: dir });
  expect(run.code).toBe(1);
  expect(run.stdout + run.stderr).toContain(file);
  for (const tag of [...SERVICES, 'ledger']) expect(await entityExists(tag), tag).toBe(true);
  return run.stdout + run.stderr;
};

describe('an unreadable manifest never becomes a prune', () => {
  it('a dangling symlink', async () => {
    await replaceWith(BROKEN, (p) => symlink(join(dir, 'services/svc-0/gone.yaml'), p));
    await expectRefused(BROKEN);
  });

  it('a symlink loop', async () => {
    await replaceWith(BROKEN, (p) => symlink('loop.yaml', p));
    await symlink('cortex.yaml', join(dir, 'services/svc-0/loop.yaml'));
    await expectRefused(BROKEN);
  });

  it('a directory named cortex.yaml', async () => {
    await replaceWith(BROKEN, (p) => mkdir(p));
    await expectRefused(BROKEN);
  });

  it('an empty (0-byte) manifest', async () => {
    await replaceWith(BROKEN, (p) => writeFile(p, ''));
    await expectRefused(BROKEN);
  });

  it('a manifest holding only `---\\n~`', async () => {
    await replaceWith(BROKEN, (p) => writeFile(p, '---\n~'));
    await expectRefused(BROKEN);
  });

  it('a symlinked folder under .cortex/catalog that points outside --dir', async () => {
    await writeFiles(outside, { 'ledger.yaml': serviceYaml('ledger') });
    await replaceWith('.cortex/catalog/team-b', (p) => symlink(outside, p, 'dir'));
    await expectRefused('.cortex/catalog/team-b');
  });

  it('a .cortex/catalog folder replaced by a file (a symlink checked out as text)', async () => {
    await replaceWith('.cortex/catalog', (p) => writeFile(p, 'team-b/\n'));
    await expectRefused('.cortex/catalog');
  });

  it.skipIf(process.getuid?.() === 0)(
    'a symlink to a file in a folder without read permission (skipped as root: root reads anything)',
    async () => {
      await writeFiles(outside, { 'locked/cortex.yaml': serviceYaml('svc-0') });
      await chmod(join(outside, 'locked'), 0o000);
      await replaceWith(BROKEN, (p) => symlink(join(outside, 'locked/cortex.yaml'), p));
      await expectRefused(BROKEN);
    },
  );

  it('a symlink to a file outside --dir that holds the key: neither its content nor the key is printed', async () => {
    await writeFile(join(outside, 'environ'), `HOME=/root\u0000CORTEX_API_KEY=${API_KEY}\u0000`);
    await replaceWith(BROKEN, (p) => symlink(join(outside, 'environ'), p));
    const output = await expectRefused(BROKEN);
    expect(output).not.toContain('CORTEX_API_KEY');
    expect(output).not.toContain('HOME=');
    for (let i = 0; i + 8 <= API_KEY.length; i++) expect(output).not.toContain(API_KEY.slice(i, i + 8));
  });

  it('a symlink to /etc/passwd: nothing of it is printed', async () => {
    await replaceWith(BROKEN, (p) => symlink('/etc/passwd', p));
    const output = await expectRefused(BROKEN);
    expect(output).not.toMatch(/root:|:\/bin\//);
  });
});
