/**
 * A no-op plan in merge mode costs the same requests as in replace mode (docs/adr-0004-co-ownership.md):
 * the same bulk descriptor read and the same read of the records; the keys each source declares
 * come with the records. `MERGE_BENCH_ENTITIES` sets the size (default 300); the benchmark measures
 * 10,000 by kind of request (`packages/bench/src/merge-noop.ts`, its readme).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../packages/emulator/src/server.js';
import { cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../../cli/run.js';

const N = Number(process.env.MERGE_BENCH_ENTITIES ?? 300);
let emulator: RunningEmulator;
let dir: string;

beforeAll(
  async () => {
    emulator = await startTestEmulator();
    dir = await tempDir();
    const files: Record<string, string> = { 'cortex-sync.yaml': 'sourceId: requests\n' };
    for (let i = 0; i < N; i += 1)
      files[`.cortex/catalog/e${i}.yaml`] =
        `openapi: 3.0.1\ninfo:\n  title: E ${i}\n  x-cortex-tag: req-e${i}\n  x-cortex-groups: [tier-1]\n  x-cortex-custom-metadata: {n: ${i}}\n`;
    await writeFiles(dir, files);
    expect((await cli(['apply', '--concurrency', '16'], { cwd: dir, emulator })).code).toBe(0);
  },
  Math.max(600_000, N * 150),
);
afterAll(async () => {
  await emulator.stop();
  await removeDir(dir);
});

const noopPlanRequests = async (mode: 'replace' | 'merge'): Promise<number> => {
  const at = emulator.requests.length;
  const r = await cli(['plan', '--detailed-exitcode', '--entity-writes', mode], { cwd: dir, emulator });
  expect(r.code, r.stdout.slice(0, 2000)).toBe(0);
  return emulator.requests.length - at;
};

it(
  `a no-op plan of ${N} entities costs the same requests in merge mode as in replace mode`,
  async () => {
    const replace = await noopPlanRequests('replace');
    // The first merge apply records the keys in their merge form (one write of the record), nothing else.
    const at = emulator.requests.length;
    expect((await cli(['apply', '--entity-writes', 'merge'], { cwd: dir, emulator })).code).toBe(0);
    const switched = emulator.requests.slice(at).filter((r) => r.method !== 'GET');
    expect(switched.filter((r) => r.method === 'PATCH')).toEqual([]);
    const merge = await noopPlanRequests('merge');
    console.log(`no-op plan of ${N} entities: replace ${replace} requests, merge ${merge} requests`);
    expect(merge).toBe(replace);
  },
  Math.max(600_000, N * 150),
);
