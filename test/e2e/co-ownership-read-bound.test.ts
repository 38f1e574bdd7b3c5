/**
 * The bound on the records merge mode reads by tag (docs/adr-0004-co-ownership.md, "Conflicts"):
 * anyone who can edit an entity can name sources on it, so one entity flooded with claims is
 * refused (`claim-unconfirmed`) — but it takes its turns, not the reads another entity's real
 * co-owner needs: that co-owner's record, left out of the list, is still read, and its key judged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { MAX_NAMED_RECORD_READS } from '../../src/engine/fetch-live.js';
import { claimKeyOf } from '../../src/kinds/entity/merge.js';
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
const repo = async (source: string, manifests: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  const files: Record<string, string> = { 'cortex-sync.yaml': `sourceId: ${source}\nentityWrites: merge\n` };
  for (const [tag, info] of Object.entries(manifests))
    files[`.cortex/catalog/${tag}.yaml`] = `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${info}`;
  await writeFiles(dir, files);
  return dir;
};

describe('entityWrites: merge, one entity flooded with claims', { timeout: 120_000 }, () => {
  it('is refused alone: another entity’s co-owner, left out of the list, is still read and its key is a field-conflict', async () => {
    const flooded = 'rb-flooded';
    const shared = 'rb-shared';
    const owner = await repo('rb-owner', { [flooded]: '  title: Flooded\n', [shared]: '  title: Shared\n' });
    expect((await run(owner, ['apply'])).code).toBe(0);
    // The real co-owner's id sorts after every forged one.
    const platform = await repo('zz-rb-platform', { [shared]: '  x-cortex-groups: [tier-1]\n' });
    expect((await run(platform, ['apply'])).code).toBe(0);
    const fakes = Array.from({ length: MAX_NAMED_RECORD_READS + 1 }, (_, i) => `aa-rb-fake-${i}`);
    const claims = fakes.map((s) => `    ${claimKeyOf(s)}: {source: ${s}}`).join('\n');
    const res = await fetch(`${emulator.url}/api/v1/open-api?failIfEntityDoesNotExist=true`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
      body: `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${flooded}\n  x-cortex-custom-metadata:\n${claims}\n`,
    });
    expect(res.status).toBe(200);

    const third = await repo('rb-third', {
      [flooded]: '  x-cortex-groups: [tier-2]\n',
      [shared]: '  x-cortex-groups: [tier-9]\n',
    });
    emulator.setFaults({
      dropFromLists: [{ match: inventoryTag('zz-rb-platform'), reads: 1000, path: '/api/v1/catalog/descriptors' }],
    });
    try {
      const r = await run(third, ['plan']);
      const out = r.stdout + r.stderr;
      expect(r.code).not.toBe(0);
      expect(out).toMatch(
        new RegExp(`entity \`${flooded}\` names source \`aa-rb-fake-[0-9]+\`[^\\n]*claim-unconfirmed`),
      );
      expect(out).not.toMatch(new RegExp(`entity \`${shared}\` names source`));
      expect(out).toMatch(new RegExp(`entity \`${shared}\`[^\\n]*zz-rb-platform[^\\n]*field-conflict`));
    } finally {
      emulator.setFaults({});
    }
  });
});
