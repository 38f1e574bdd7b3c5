/**
 * `watch --dir`'s file watcher: what it reports as changed (the snapshot's `changedFiles`, `.` =
 * everything) and what it costs. A change names exactly its file without the folder being listed
 * again; new folders are watched, removed ones release their watchers; `.git` and `node_modules`
 * are not watched; a watcher that fails is an error and makes the next run read everything.
 */
import { mkdirSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDirSource } from '../../src/watch/dir-source.js';
import { watchTree } from '../../src/watch/tree-watcher.js';
import type { Source } from '../../src/watch/source.js';
import { type FsSpy, spyOnFs, systemError } from './fs-spy.js';
import { removeDir, sleep, tempDir, writeFiles } from './harness.js';

let root: string;
let spy: FsSpy | undefined;
let source: Source | undefined;

beforeEach(async () => {
  root = await tempDir();
  await writeFiles(root, {
    'cortex-sync.yaml': 'sourceId: watch-test\n',
    '.cortex/catalog/a.yaml': 'a',
    '.cortex/catalog/b.yaml': 'b',
  });
});
afterEach(async () => {
  await source?.close();
  source = undefined;
  spy?.restore();
  spy = undefined;
  await removeDir(root);
});

/** File system watchers open in this process (each `fs.watch` holds one until it is closed). */
const openWatchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;

interface Armed {
  errors: Error[];
  /** Gathers what the source reports as changed until `done` holds for all gathered (5 s at most). */
  changedUntil(done: (paths: ReadonlySet<string>) => boolean): Promise<Set<string>>;
  /** Everything reported within `ms`. */
  changedWithin(ms: number): Promise<Set<string>>;
}

const arm = async (dir = root): Promise<Armed> => {
  const started = createDirSource({ dir, debounceMs: 40, rootCheckMs: 100 });
  source = started;
  const errors: Error[] = [];
  await started.watch(
    () => {},
    (error) => errors.push(error),
  );
  const signal = new AbortController().signal;
  const gather = async (into: Set<string>) => {
    for (const path of (await started.sync(signal)).changedFiles ?? []) into.add(path);
  };
  return {
    errors,
    changedUntil: async (done) => {
      const gathered = new Set<string>();
      for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(50)) {
        await gather(gathered);
        if (done(gathered)) return gathered;
      }
      const some = JSON.stringify([...gathered].slice(0, 20));
      throw new Error(`not reported within 5 s; reported ${gathered.size} paths: ${some}`);
    },
    changedWithin: async (ms) => {
      const gathered = new Set<string>();
      await sleep(ms);
      await gather(gathered);
      return gathered;
    },
  };
};

const has = (path: string) => (paths: ReadonlySet<string>) => paths.has(path);

describe('watch --dir: what a change reports', () => {
  it('a file content change reports exactly that file', async () => {
    const watcher = await arm();
    await writeFile(join(root, '.cortex/catalog/a.yaml'), 'changed');
    const changed = await watcher.changedUntil(has('.cortex/catalog/a.yaml'));
    for (const later of await watcher.changedWithin(300)) changed.add(later);
    expect([...changed]).toEqual(['.cortex/catalog/a.yaml']);
    expect(watcher.errors).toEqual([]);
  });

  it('a file in a new nested folder is reported, and so are later changes in it', async () => {
    const watcher = await arm();
    await writeFiles(root, { 'teams/new/deep/x.yaml': 'x' });
    await watcher.changedUntil(has('teams/new/deep/x.yaml'));
    await watcher.changedWithin(300);

    await writeFile(join(root, 'teams/new/deep/x.yaml'), 'x2');
    await writeFile(join(root, 'teams/new/deep/y.yaml'), 'y');
    const later = await watcher.changedUntil((paths) => paths.has('teams/new/deep/y.yaml'));
    for (const more of await watcher.changedWithin(300)) later.add(more);
    expect([...later].sort()).toEqual(['teams/new/deep/x.yaml', 'teams/new/deep/y.yaml']);
  });

  it('a removed folder is reported and its watchers are closed', async () => {
    const before = openWatchers();
    const watcher = await arm();
    const armed = openWatchers();
    expect(armed).toBeGreaterThan(before);
    await writeFiles(root, { 'teams/one/x.yaml': 'x', 'teams/one/deeper/y.yaml': 'y' });
    await watcher.changedUntil(has('teams/one/deeper/y.yaml'));
    expect(openWatchers()).toBeGreaterThan(armed);

    await rm(join(root, 'teams'), { recursive: true });
    await watcher.changedUntil(has('teams'));
    await expect.poll(openWatchers).toBe(armed);
  });

  it('a folder moved within the root, then out and back: both names reported, and its files watched under the new one only', async () => {
    const outside = await tempDir();
    try {
      await writeFiles(root, { 'teams/a/x.yaml': 'x' });
      const watcher = await arm();
      const armed = openWatchers();
      await rename(join(root, 'teams/a'), join(root, 'teams/b'));
      await watcher.changedUntil((paths) => paths.has('teams/a') && paths.has('teams/b/x.yaml'));
      await rename(join(root, 'teams/b'), join(outside, 'b'));
      await watcher.changedUntil(has('teams/b'));
      await expect.poll(openWatchers).toBe(armed - 1);
      // Written while it is outside: not reported (nothing outside the root is).
      await writeFile(join(outside, 'b/x.yaml'), 'outside');
      await rename(join(outside, 'b'), join(root, 'teams/c'));
      await watcher.changedUntil(has('teams/c/x.yaml'));
      await watcher.changedWithin(200);
      await writeFile(join(root, 'teams/c/x.yaml'), 'back');
      const changed = await watcher.changedUntil(has('teams/c/x.yaml'));
      for (const later of await watcher.changedWithin(200)) changed.add(later);
      expect([...changed]).toEqual(['teams/c/x.yaml']);
      expect(openWatchers()).toBe(armed);
    } finally {
      await removeDir(outside);
    }
  });

  it('nothing inside node_modules or .git is reported', async () => {
    const watcher = await arm();
    await writeFiles(root, {
      'node_modules/pkg/cortex.yaml': 'x',
      '.git/HEAD': 'ref: refs/heads/main\n',
      'teams/node_modules/cortex.yaml': 'y',
    });
    await sleep(200);
    await writeFiles(root, { 'node_modules/pkg/cortex.yaml': 'x2', '.git/HEAD': 'ref: refs/heads/other\n' });
    await writeFile(join(root, '.cortex/catalog/b.yaml'), 'b2');
    const changed = await watcher.changedUntil(has('.cortex/catalog/b.yaml'));
    for (const later of await watcher.changedWithin(300)) changed.add(later);
    expect([...changed].sort()).toEqual(['.cortex/catalog/b.yaml', 'teams']);
  });

  it('a folder replaced by a symlink reports the link, and the folder it points at is not watched', async () => {
    const outside = await tempDir();
    try {
      await writeFiles(root, { 'teams/x.yaml': 'x' });
      const watcher = await arm();
      await rm(join(root, 'teams'), { recursive: true });
      await symlink(outside, join(root, 'teams'));
      await watcher.changedUntil(has('teams'));
      await watcher.changedWithin(300);

      await writeFile(join(outside, 'cortex.yaml'), 'outside');
      await writeFile(join(root, '.cortex/catalog/a.yaml'), 'sentinel');
      const changed = await watcher.changedUntil(has('.cortex/catalog/a.yaml'));
      for (const later of await watcher.changedWithin(300)) changed.add(later);
      expect([...changed]).toEqual(['.cortex/catalog/a.yaml']);
    } finally {
      await removeDir(outside);
    }
  });
});

describe('watch --dir: a watcher that fails', () => {
  it('an error from a folder watcher reaches onError and makes the next run read everything', async () => {
    spy = spyOnFs();
    const watcher = await arm();
    const catalog = spy.watchers.get(join(root, '.cortex/catalog'));
    expect(catalog).toBeDefined();
    catalog?.emit('error', systemError('EIO', 'EIO: i/o error, watch'));
    await watcher.changedUntil(has('.'));
    expect(watcher.errors.map((e) => e.message).join('\n')).toMatch(/EIO/);
  });

  it('a new folder that cannot be watched (inotify limit) is an error and `.`, and is watched once it can be', async () => {
    spy = spyOnFs();
    const watcher = await arm();
    const fresh = join(root, 'fresh');
    spy.failWatch = (path) => (path === fresh ? systemError('ENOSPC', 'ENOSPC: System limit reached') : undefined);
    await writeFiles(root, { 'fresh/z.yaml': 'z' });
    await watcher.changedUntil(has('.'));
    expect(watcher.errors.map((e) => e.message).join('\n')).toMatch(/inotify/);
    const failures = watcher.errors.length;

    // Tried again at each root check; the same failure is neither an error nor a change again.
    expect(await watcher.changedWithin(350)).toEqual(new Set());
    expect(watcher.errors).toHaveLength(failures);
    spy.failWatch = undefined;
    await watcher.changedUntil(has('.'));
    await writeFile(join(fresh, 'z.yaml'), 'z2');
    await watcher.changedUntil(has('fresh/z.yaml'));
  });
});

/** File descriptors open in this process. */
const openFds = () => readdirSync('/proc/self/fd').length;

describe('watch --dir: churn', () => {
  it('1,000 folders and files created and deleted at once leave no watcher or descriptor behind, and the end state is reported', async () => {
    const watcher = await arm();
    const armed = openWatchers();
    const fds = openFds();
    const churn = join(root, 'churn');
    // Ten cycles a turn: the watcher looks at the folder while it comes and goes.
    for (let i = 0; i < 1000; i++) {
      mkdirSync(churn);
      writeFileSync(join(churn, 'x.yaml'), `${i}`);
      unlinkSync(join(churn, 'x.yaml'));
      rmdirSync(churn);
      writeFileSync(join(root, 'flip.yaml'), `${i}`);
      unlinkSync(join(root, 'flip.yaml'));
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    await watcher.changedUntil(has('churn'));
    await expect.poll(openWatchers, { timeout: 3000 }).toBe(armed);
    await expect.poll(openFds, { timeout: 3000 }).toBeLessThanOrEqual(fds);

    await writeFiles(root, { 'churn/final/x.yaml': 'x' });
    await watcher.changedUntil(has('churn/final/x.yaml'));
    await expect.poll(openWatchers, { timeout: 3000 }).toBe(armed + 2);
  });

  it('a folder gone between its look and its watch is a change, not a failure', async () => {
    spy = spyOnFs();
    const watcher = await arm();
    const churn = join(root, 'churn');
    // The folder is removed at the moment the watcher arms a watch on it.
    spy.failWatch = (path) => {
      if (path === churn) rmSync(churn, { recursive: true, force: true });
      return undefined;
    };
    await mkdir(churn);
    // The watcher may see the folder, and the spy remove it, before the file is written in it.
    await writeFile(join(churn, 'x.yaml'), 'x').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await watcher.changedUntil(has('churn'));
    // The spy's removal is itself an event for `churn`, which may come in a batch of its own; what
    // must not come is `.` (everything, after a failure) or anything else.
    expect([...(await watcher.changedWithin(350))].filter((path) => path !== 'churn')).toEqual([]);
    expect(watcher.errors.map((e) => e.message)).toEqual([]);
  });
});

describe('watch --dir: hostile names', () => {
  it('a folder whose name is not UTF-8 is said once (it cannot be watched by that name), then left alone', async () => {
    mkdirSync(Buffer.concat([Buffer.from(`${root}/teams-`), Buffer.from([0xff, 0xfe])]));
    const watcher = await arm();
    expect(watcher.errors.map((e) => e.message).join('\n')).toMatch(/not valid UTF-8/);
    await watcher.changedUntil(has('.'));
    // Tried again at the root checks: not reported as a failure or `.` again.
    await watcher.changedWithin(350);
    expect(await watcher.changedWithin(350)).toEqual(new Set());
    expect(watcher.errors).toHaveLength(1);
  });

  it('names with a newline, a backslash, `..` inside, and 255 bytes are reported as they are', async () => {
    const watcher = await arm();
    const names = ['new\nline.yaml', 'back\\slash.yaml', 'a..b.yaml', '...yaml', `${'x'.repeat(250)}.yaml`];
    await mkdir(join(root, 'odd'));
    await watcher.changedUntil(has('odd'));
    for (const name of names) await writeFile(join(root, 'odd', name), 'x');
    const wanted = names.map((name) => `odd/${name}`);
    const changed = await watcher.changedUntil((paths) => wanted.every((path) => paths.has(path)));
    expect([...changed].filter((path) => !wanted.includes(path))).toEqual([]);
  });
});

describe('watch --dir: a root reached through a symlink', () => {
  it('a root watch that failed once is armed again on the folder the symlink points at', async () => {
    const link = `${root}-link`;
    await symlink(root, link);
    try {
      spy = spyOnFs();
      let failures = 0;
      spy.failWatch = (path) =>
        path === link && failures++ === 0 ? systemError('EMFILE', 'EMFILE: too many open files') : undefined;
      const watcher = await arm(link);
      await watcher.changedUntil(has('.'));
      // Tried again at the next root check: the root is the folder behind the link, not the link.
      await expect.poll(() => spy?.calls.watch.filter((path) => path === link).length, { timeout: 2000 }).toBe(2);
      await watcher.changedWithin(200);
      await writeFile(join(root, '.cortex/catalog/a.yaml'), 'changed');
      await watcher.changedUntil(has('.cortex/catalog/a.yaml'));
    } finally {
      await rm(link, { force: true });
    }
  });
});

describe('watch --dir: the inotify limit reached with many folders', () => {
  it('a retry stops at the first folder still over the limit, and brings every folder back once it can', async () => {
    for (let i = 0; i < 2000; i++) mkdirSync(join(root, `f${i}`));
    spy = spyOnFs();
    let limited = true;
    spy.failWatch = (path) =>
      limited && /\/f1\d*$/.test(path) ? systemError('ENOSPC', 'ENOSPC: System limit reached') : undefined;
    const reports: string[][] = [];
    const errors: Error[] = [];
    const tree = await watchTree({
      root,
      skipped: new Set(),
      onChange: (paths) => reports.push([...paths]),
      onError: (error) => errors.push(error),
    });
    try {
      expect(errors).toHaveLength(1);
      expect(reports).toEqual([['.']]);
      const watched = openWatchers();
      spy.reset();
      const cpu = process.cpuUsage();
      for (let i = 0; i < 5; i++) await tree.retry();
      const used = process.cpuUsage(cpu);
      // Before: every one of the 1,111 folders was looked at and tried, and every watcher scanned for
      // each of them, every second: most of a core while the limit lasts.
      expect(spy.calls.watch.length).toBeLessThanOrEqual(5);
      expect((used.user + used.system) / 1000).toBeLessThan(100);
      expect(reports).toHaveLength(1);
      expect(errors).toHaveLength(1);

      limited = false;
      await tree.retry();
      expect(openWatchers()).toBe(watched + 1111);
      expect(reports.flat()).toContain('.');
      expect(errors).toHaveLength(1);
    } finally {
      tree.close();
    }
  });
});

describe('watch --dir: a burst of events', () => {
  it('more file events at once than the system queue holds: every file is reported, or everything', async () => {
    const watcher = await arm();
    await mkdir(join(root, 'burst'));
    await watcher.changedUntil(has('burst'));
    // Written while the event loop is blocked: the events pile up in the kernel's queue (16,384
    // by default; 9,000 new files are 18,000 events), which drops what overflows without a word.
    for (let i = 0; i < 9000; i++) writeFileSync(join(root, 'burst', `f${i}.yaml`), 'x');
    const files = (paths: ReadonlySet<string>) => [...paths].filter((path) => path.startsWith('burst/')).length;
    const changed = await watcher.changedUntil((paths) => paths.has('.') || files(paths) === 9000);
    expect(changed.has('.') || files(changed) === 9000).toBe(true);
  });
});

describe('watch --dir: cost of a change', () => {
  it('a one-file change in a folder of 2,000 files neither lists nor stats the folder', async () => {
    const catalog = join(root, '.cortex/catalog');
    await mkdir(catalog, { recursive: true });
    await Promise.all(Array.from({ length: 2000 }, (_, i) => writeFile(join(catalog, `e${i}.yaml`), `e${i}`)));
    spy = spyOnFs();
    const watcher = await arm();
    spy.reset();

    await writeFile(join(catalog, 'e7.yaml'), 'changed');
    const changed = await watcher.changedUntil(has('.cortex/catalog/e7.yaml'));
    for (const later of await watcher.changedWithin(1200)) changed.add(later);
    expect([...changed]).toEqual(['.cortex/catalog/e7.yaml']);
    expect(spy.callsUnder(catalog)).toEqual({ lstat: 0, stat: 0, readdir: 0, watch: 0 });
  });

  it('an editor saving through a rename reports the file (its temporary name may be reported too)', async () => {
    const watcher = await arm();
    const target = join(root, '.cortex/catalog/a.yaml');
    await writeFile(`${target}.tmp`, 'saved');
    await rename(`${target}.tmp`, target);
    const changed = await watcher.changedUntil(has('.cortex/catalog/a.yaml'));
    for (const later of await watcher.changedWithin(300)) changed.add(later);
    expect([...changed].filter((path) => !path.endsWith('.tmp'))).toEqual(['.cortex/catalog/a.yaml']);
  });

  it('close() releases every watcher', async () => {
    await writeFiles(root, { 'teams/one/x.yaml': 'x' });
    const before = openWatchers();
    await arm();
    expect(openWatchers()).toBeGreaterThan(before);
    await source?.close();
    source = undefined;
    await expect.poll(openWatchers).toBe(before);
  });
});
