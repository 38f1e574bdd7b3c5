/**
 * A file the repository controls is read only as a regular file inside the root, judged on the
 * descriptor actually opened: whatever is swapped in between discovery and the read (a symlink,
 * a FIFO, a folder on the path) is refused, and nothing of it is read.
 */
import { execFileSync } from 'node:child_process';
import { link, mkdir, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { loadManifests } from '../../src/source/load.js';
import { readRegularFile } from '../../src/source/regular-file.js';
import { removeDir, tempDir } from '../engine/helpers.js';

const SECRET = 'ghp_regularFileSecret0123456789';

let root: string;
let outside: string;
beforeEach(async () => {
  root = await realpath(await tempDir('cortex-regular-'));
  outside = await realpath(await tempDir('cortex-regular-outside-'));
  await writeFile(path.join(outside, 'secret.yaml'), `token: ${SECRET}\n`);
});
afterEach(async () => {
  await removeDir(root);
  await removeDir(outside);
});

const options = () => ({ maxBytes: 1024 * 1024, inside: root, resolved: true });

describe('readRegularFile on a path resolved earlier', () => {
  it('reads a regular file inside the root', async () => {
    await writeFile(path.join(root, 'a.yaml'), 'a: 1\n');
    const read = readRegularFile(path.join(root, 'a.yaml'), options());
    expect(read).toMatchObject({ ok: true, realPath: path.join(root, 'a.yaml') });
    expect(read.ok && read.bytes.toString()).toBe('a: 1\n');
  });

  it('a symlink swapped in for the file after it was found is refused, not followed', async () => {
    const file = path.join(root, 'a.yaml');
    await symlink(path.join(outside, 'secret.yaml'), file);
    const read = readRegularFile(file, options());
    expect(read).toMatchObject({ ok: false, reason: 'was replaced by a symlink while being read' });
  });

  it('a folder on the path swapped for a symlink out of the root is caught on the opened descriptor', async () => {
    await mkdir(path.join(root, 'svc'));
    await writeFile(path.join(root, 'svc/cortex.yaml'), 'a: 1\n');
    const found = path.join(root, 'svc/cortex.yaml');
    // Swap: the folder moves away and a symlink to a folder outside takes its name.
    await rename(path.join(root, 'svc'), path.join(root, 'svc-moved'));
    await writeFile(path.join(outside, 'cortex.yaml'), `token: ${SECRET}\n`);
    await symlink(outside, path.join(root, 'svc'));
    const read = readRegularFile(found, options());
    expect(read).toMatchObject({ ok: false, code: 'outside-root' });
  });

  it('a FIFO swapped in is refused at once (the read does not hang)', async () => {
    const file = path.join(root, 'a.yaml');
    execFileSync('mkfifo', [file]);
    const started = Date.now();
    expect(readRegularFile(file, options())).toMatchObject({
      ok: false,
      code: 'not-regular',
      reason: 'is a FIFO (named pipe), not a regular file',
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a file removed after it was found is "missing", not "nothing to read"', async () => {
    expect(readRegularFile(path.join(root, 'gone.yaml'), options())).toMatchObject({
      ok: false,
      code: 'missing',
      reason: 'was removed while being read',
    });
  });

  it('a file over the limit is refused after reading at most one byte past it', async () => {
    await writeFile(path.join(root, 'big.yaml'), Buffer.alloc(4096, 'a'));
    expect(readRegularFile(path.join(root, 'big.yaml'), { ...options(), maxBytes: 1000 })).toMatchObject({
      ok: false,
      code: 'too-large',
      size: 4096,
    });
  });

  it('/dev/zero and /proc/self/environ are outside any manifest root', () => {
    for (const file of ['/dev/zero', '/proc/self/environ'])
      expect(readRegularFile(file, { maxBytes: 100, inside: root })).toMatchObject({ ok: false, code: 'outside-root' });
  });

  it('a device is refused as not regular, without reading it', () => {
    expect(readRegularFile('/dev/zero', { maxBytes: 100 })).toMatchObject({ ok: false, code: 'not-regular' });
  });
});

describe('the loader', () => {
  it('a hard link inside the root is an ordinary file (git never makes one; who can, can read its target)', async () => {
    await mkdir(path.join(root, 'svc'));
    await writeFile(path.join(outside, 'desc.yaml'), 'openapi: 3.0.1\ninfo:\n  title: x\n  x-cortex-tag: linked\n');
    await link(path.join(outside, 'desc.yaml'), path.join(root, 'svc/cortex.yaml'));
    const loaded = await loadManifests(root, KIND_HANDLERS);
    expect(loaded.objects.map((o) => o.id)).toEqual(['linked']);
  });

  it('a binary or huge manifest is an error naming the file, quoting none of it', async () => {
    await mkdir(path.join(root, 'bin'));
    await mkdir(path.join(root, 'big'));
    await writeFile(path.join(root, 'bin/cortex.yaml'), Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]));
    await writeFile(path.join(root, 'big/cortex.yaml'), `x: "${SECRET}${'a'.repeat(2 * 1024 * 1024)}"\n`);
    const loaded = await loadManifests(root, KIND_HANDLERS);
    expect(loaded.diagnostics.map((d) => [d.file, d.code])).toEqual([
      ['big/cortex.yaml', 'file-too-large'],
      ['bin/cortex.yaml', 'encoding'],
    ]);
    expect(JSON.stringify(loaded.diagnostics)).not.toContain(SECRET);
    await rm(path.join(root, 'big'), { recursive: true });
  });
});
