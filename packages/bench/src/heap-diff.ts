/**
 * Two V8 heap snapshots compared by what holds memory: the self size and count of objects per
 * constructor (per node type for strings, arrays, code), largest change first. The watch benchmark
 * writes its snapshots with `--snapshot-dir DIR` (after the first sync, after the last change).
 *
 * Usage: `node --max-old-space-size=4096 dist/bench/heap-diff.js BEFORE.heapsnapshot AFTER.heapsnapshot [--top 25]`
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface Group {
  count: number;
  bytes: number;
}

/** Self size and count per constructor (`object:Name`, `closure:name`) or node type (`string`, `code`, …). */
export const groupSnapshot = (snap: Snapshot): Map<string, Group> => {
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, Group>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt] ?? 0] ?? '?';
    const key =
      type === 'object' || type === 'closure' || type === 'native'
        ? `${type}:${snap.strings[snap.nodes[i + nameAt] ?? 0] ?? '?'}`
        : type;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += snap.nodes[i + sizeAt] ?? 0;
    groups.set(key, group);
  }
  return groups;
};

export interface GroupChange {
  key: string;
  before: Group;
  after: Group;
}

/** Every group, largest change in bytes first. */
export const diffGroups = (before: Map<string, Group>, after: Map<string, Group>): GroupChange[] =>
  [...new Set([...before.keys(), ...after.keys()])]
    .map((key) => ({
      key,
      before: before.get(key) ?? { count: 0, bytes: 0 },
      after: after.get(key) ?? { count: 0, bytes: 0 },
    }))
    .sort((a, b) => Math.abs(b.after.bytes - b.before.bytes) - Math.abs(a.after.bytes - a.before.bytes));

const total = (groups: Map<string, Group>): number => [...groups.values()].reduce((s, g) => s + g.bytes, 0);
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

export const renderDiff = (before: Map<string, Group>, after: Map<string, Group>, top: number): string => {
  const rows = diffGroups(before, after)
    .slice(0, top)
    .map(
      (c) =>
        `| ${c.key.slice(0, 60)} | ${mb(c.before.bytes)} | ${mb(c.after.bytes)} | ${((c.after.bytes - c.before.bytes) / 1024).toFixed(0)} | ${c.after.count - c.before.count} |`,
    );
  return [
    `Heap (self sizes): ${mb(total(before))} MB → ${mb(total(after))} MB`,
    '',
    '| constructor / type | before MB | after MB | change KB | change count |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
};

// By file name: `main.js` bundles this module, and its own `import.meta.url` is then `main.js`'s.
const isMain = basename(process.argv[1] ?? '') === 'heap-diff.js';
if (isMain) {
  const [beforeFile, afterFile] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!beforeFile || !afterFile) throw new Error('usage: heap-diff.js BEFORE.heapsnapshot AFTER.heapsnapshot');
  const at = process.argv.indexOf('--top');
  const top = at >= 0 ? Number(process.argv[at + 1]) : 25;
  const load = async (file: string) => groupSnapshot(JSON.parse(await readFile(file, 'utf8')) as Snapshot);
  process.stdout.write(`${renderDiff(await load(beforeFile), await load(afterFile), top)}\n`);
}
