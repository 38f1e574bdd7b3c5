/**
 * An archived entity that names a co-owner (docs/adr-0004-co-ownership.md): the list of entities
 * gives an archived one no descriptor, so its claims are seen only once its descriptor is read by
 * its tag. The owner bringing it back with a key the co-owner declares is a `field-conflict` even
 * when the list of records leaves the co-owner's record out; nothing is unarchived or written.
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
const api = (method: string, path: string) =>
  fetch(`${emulator.url}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}` } });
const repo = async (source: string, tag: string, info: string): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, {
    'cortex-sync.yaml': `sourceId: ${source}\nentityWrites: merge\n`,
    [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${info}`,
  });
  return dir;
};

describe('entityWrites: merge, an archived entity naming a co-owner', { timeout: 120_000 }, () => {
  it('the owner declaring the co-owner’s key again is a field-conflict though the list left its record out', async () => {
    const tag = 'arch-claimed';
    const owner = await repo('arch-owner', tag, '  title: Shared\n');
    const platform = await repo('arch-platform', tag, '  x-cortex-groups: [tier-1]\n');
    expect((await run(owner, ['apply'])).code).toBe(0);
    expect((await run(platform, ['apply'])).code).toBe(0);
    expect((await api('PUT', `/api/v1/catalog/${tag}/archive`)).status).toBe(200);
    await writeFiles(owner, {
      [`.cortex/catalog/${tag}.yaml`]: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n  title: Shared\n  x-cortex-groups: [tier-9]\n`,
    });
    emulator.setFaults({
      dropFromLists: [{ match: inventoryTag('arch-platform'), reads: 1000, path: '/api/v1/catalog/descriptors' }],
    });
    try {
      const at = emulator.requests.length;
      const r = await run(owner, ['apply']);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toMatch(/field-conflict/);
      expect(r.stdout + r.stderr).toMatch(/info\.x-cortex-groups[\s\S]*arch-platform/);
      expect(emulator.requests.slice(at).filter((q) => q.method !== 'GET')).toEqual([]);
    } finally {
      emulator.setFaults({});
    }
    const details = (await (await api('GET', `/api/v1/catalog/${tag}`)).json()) as { isArchived?: boolean };
    expect(details.isArchived).toBe(true);
  });
});
