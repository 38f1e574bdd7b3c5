/**
 * `cortex-sync status` (issue 31): what a source's ownership record lists, the origin its id is
 * bound to, who holds its lease and since when, the last apply recorded. Read-only: against the
 * emulator on 127.0.0.1, it sends GET requests only. The binary as it ships, as a child process,
 * runs the first `status`; the rest runs the same entrypoint in-process (`cli`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/index.js';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { writeLease } from '../../src/engine/lease.js';
import { bundleCli } from '../support/cli-bundle.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';
import { runBin } from './spawn-cli.js';

let emulator: RunningEmulator;
let bundleDir: string;
let entry: string;
let dir: string;
let sourceId: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  bundleDir = await tempDir();
  entry = await bundleCli(bundleDir);
}, 240_000);
afterAll(async () => {
  await emulator.stop();
  await removeDir(bundleDir);
});

let n = 0;
beforeEach(async () => {
  dir = await tempDir();
  n += 1;
  sourceId = `status-${n}`;
  await writeFiles(dir, {
    'cortex-sync.yaml': `sourceId: ${sourceId}\n`,
    '.cortex/catalog/a.yaml': serviceYaml(`status-a-${n}`),
    '.cortex/catalog/b.yaml': serviceYaml(`status-b-${n}`),
  });
  return () => removeDir(dir);
});

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  cli(args, { cwd: dir, emulator, env: { NO_COLOR: '1', ...env } });
const runProcess = (args: string[]) => runBin(entry, args, { cwd: dir, emulatorUrl: emulator.url });
const nonGetSince = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');

interface StatusJson {
  sourceId: string;
  origin: string | null;
  objects: Record<string, number>;
  lease: { holder: string; since: string | null } | null;
  lastApply: { at: string; revision?: string } | null;
  list?: { kind: string; id: string; file?: string }[];
}

// Several runs each: a loaded machine takes a while, never a wrong answer.
describe('status', { timeout: 240_000 }, () => {
  it('after an apply: counts per kind, the origin, no lease, the last apply; GET only', async () => {
    expect((await run(['apply', '--auto-approve'], { CORTEX_SYNC_ORIGIN: 'github.com/acme/status' })).code).toBe(0);
    const before = emulator.requests.length;
    const r = await runProcess(['status', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(nonGetSince(before)).toEqual([]);
    const status = JSON.parse(r.stdout) as StatusJson;
    expect(status).toMatchObject({
      sourceId,
      origin: 'github.com/acme/status',
      objects: { entity: 2 },
      lease: null,
    });
    expect(status.list).toBeUndefined();
    expect(Date.parse(status.lastApply?.at ?? '')).toBeGreaterThan(0);

    const listed = JSON.parse((await run(['status', '--output', 'json', '--objects'])).stdout) as StatusJson;
    expect(listed.list).toEqual([
      { kind: 'entity', id: `status-a-${n}`, file: '.cortex/catalog/a.yaml' },
      { kind: 'entity', id: `status-b-${n}`, file: '.cortex/catalog/b.yaml' },
    ]);

    const text = await run(['status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(sourceId);
    expect(text.stdout).toContain('github.com/acme/status');
    expect(text.stdout).toMatch(/entity\s+2/);
    expect(text.stdout).toContain('lease: free');
    expect(nonGetSince(before)).toEqual([]);
  });

  it('a source with no record: says so, exit 0', async () => {
    const r = await run(['status', '--source-id', 'never-applied', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      sourceId: 'never-applied',
      origin: null,
      objects: {},
      lease: null,
      lastApply: null,
    });
    const text = await run(['status', '--source-id', 'never-applied']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('no ownership record');
  });

  it('a lease someone holds: who and since when', async () => {
    expect((await run(['apply', '--auto-approve'])).code).toBe(0);
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY });
    const since = Date.now();
    await writeLease(client, {
      source: sourceId,
      holder: 'ci-runner run 1234',
      expiresAt: since + 3_600_000,
      since,
      pending: [],
    });
    await client.close();
    const r = await run(['status', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const status = JSON.parse(r.stdout) as StatusJson;
    expect(status.lease).toEqual({ holder: 'ci-runner run 1234', since: new Date(since).toISOString() });
    const text = await run(['status']);
    expect(text.stdout).toContain('held by ci-runner run 1234');
  });

  it('values from the workspace are printed escaped', async () => {
    const hostile = 'evil\u001b[2J\n::error::forged';
    expect((await run(['apply', '--auto-approve'], { CORTEX_SYNC_ORIGIN: hostile })).code).toBe(0);
    const text = await run(['status', '--objects']);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('\u001b');
    expect(text.stdout).not.toMatch(/^::error::/m);
  });
});
