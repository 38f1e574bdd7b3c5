// Fetches the Node.js release CI tests on, from the npm registry (the `node-<platform>-<arch>`
// packages carry Node's official binaries), into a cache folder outside the repository, and prints
// the folder that holds its `node` (to put first on PATH). Nothing is installed into the project:
// its lockfile and `npm ci` stay the same on every Node it supports.
//
// Usage: node scripts/fetch-node.mjs <major>      (22 or 24: the version pinned below)
// The cache: $CORTEX_SYNC_NODE_CACHE, else $XDG_CACHE_HOME/cortex-sync/node, else ~/.cache/cortex-sync/node.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The exact releases CI runs on (the newest of each line when last bumped). */
export const PINNED = { 22: '22.23.3', 24: '24.21.0' };

const major = process.argv[2];
const version = PINNED[major];
if (!version) {
  console.error(`fetch-node: which Node? One of ${Object.keys(PINNED).join(', ')} (got ${major ?? 'nothing'})`);
  process.exit(2);
}
const cache =
  process.env.CORTEX_SYNC_NODE_CACHE ||
  join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cortex-sync', 'node');
const name = `node-${process.platform}-${process.arch}`;
const target = join(cache, `${name}-${version}`);
const bin = join(target, 'bin');

if (!existsSync(join(bin, 'node'))) {
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, '.fetch-'));
  try {
    // `npm pack` checks the tarball against the registry's integrity hash; the version is exact.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', work], {
        cwd: work,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', join(work, packed[0].filename), '-C', unpacked, '--strip-components=1']);
    const said = execFileSync(join(unpacked, 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
    if (said !== `v${version}`) throw new Error(`${name}@${version} holds a node that says ${said}`);
    rmSync(target, { recursive: true, force: true });
    renameSync(unpacked, target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
console.log(bin);
