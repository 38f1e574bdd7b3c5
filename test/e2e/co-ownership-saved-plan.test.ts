/**
 * Claims of merge mode (docs/adr-0004-co-ownership.md) against a list of the records that keeps
 * leaving a co-owner's record out: a saved plan made while it did is applied as planned (the
 * record read by its tag counts at apply time as it did at plan time), and what it writes is the
 * plan's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY, cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

let emulator: RunningEmulator;
const dirs: string[] = [];

beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(async () => {
  await emulator.stop();
  for (const dir of dirs) await removeDir(dir);
});

const env = (): NodeJS.ProcessEnv => ({ CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY });
const run = (dir: string, args: string[]) => cli(args, { cwd: dir, env: env() });
const infoOf = async (tag: string): Promise<Record<string, unknown>> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${tag}/openapi`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return ((await res.json()) as { info: Record<string, unknown> }).info;
};
const repo = async (source: string, tag: string, info: string): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, {
    'cortex-sync.yaml': `sourceId: ${source}\nentityWrites: merge\n`,
    [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${info}`,
  });
  return dir;
};

describe(
  'entityWrites: merge, a saved plan while a co-owner’s record is left out of every list',
  { timeout: 120_000 },
  () => {
    it('apply FILE applies the plan: the record read by its tag at plan time is read so again, not taken for a change', async () => {
      const tag = 'ca-saved';
      const owner = await repo('ca-owner', tag, '  title: Shared\n  description: owned here\n');
      const platform = await repo('ca-platform', tag, '  x-cortex-groups: [tier-1]\n');
      expect((await run(owner, ['apply'])).code).toBe(0);
      expect((await run(platform, ['apply'])).code).toBe(0);
      emulator.setFaults({
        dropFromLists: [{ match: inventoryTag('ca-platform'), reads: 1000, path: '/api/v1/catalog/descriptors' }],
      });
      try {
        await writeFiles(owner, {
          [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: Shared\n  description: changed here\n`,
        });
        const file = `${owner}/p.json`;
        const planned = await run(owner, ['plan', '--out', file]);
        expect(planned.code, planned.stdout + planned.stderr).toBe(0);
        const applied = await run(owner, ['apply', file]);
        expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      } finally {
        emulator.setFaults({});
      }
      expect(await infoOf(tag)).toMatchObject({ description: 'changed here', 'x-cortex-groups': ['tier-1'] });
    });
  },
);
