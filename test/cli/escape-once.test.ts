/**
 * A name the CLI prints is escaped once: a control character shows as `\n`, a backslash as `\\`,
 * never `\\n` (which would say the name holds a backslash and an `n`). Messages carry the raw
 * name; the entrypoint that prints them escapes it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { writeLease } from '../../src/engine/lease.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  emulator.reset();
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

describe('the error line of the CLI', () => {
  it('names the holder of the apply lease escaped once', async () => {
    const source = 'escape-src';
    const env = { CORTEX_SYNC_SOURCE_ID: source, CORTEX_SYNC_LEASE_WAIT: '0' };
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('escape-svc') });
    // A first apply writes the source's records (and the type they are entities of).
    expect((await cli(['apply', '--auto-approve'], { cwd: dir, emulator, env })).code).toBe(0);
    const client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
    // A lease record is anyone's to write: this one names a holder with a newline and a backslash.
    await writeLease(client, {
      source,
      holder: 'ci\nrunner\\7',
      expiresAt: Date.now() + 600_000,
      since: Date.now(),
      beat: 1,
      pending: [],
    });
    await writeFiles(dir, { 'svc2/cortex.yaml': serviceYaml('escape-svc-2') });
    const run = await cli(['apply', '--auto-approve'], { cwd: dir, emulator, env });
    expect(run.code).toBe(1);
    const line = run.stderr.split('\n').find((l) => l.startsWith('error: '));
    expect(line).toContain('held by ci\\nrunner\\\\7');
  }, 30_000);
});

describe('the reason of an ownership-record write', () => {
  it('names the origin (the folder, here with a backslash) escaped once in text, and raw in JSON', async () => {
    const root = join(dir, 'or\\ig');
    await mkdir(root);
    await writeFiles(root, { 'svc/cortex.yaml': serviceYaml('origin-svc') });
    const env = { CORTEX_SYNC_SOURCE_ID: 'origin-src' };
    const text = await cli(['plan'], { cwd: root, emulator, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/bind the source id to origin `path:[^`]*\/or\\\\ig`/);
    const json = await cli(['plan', '--output', 'json'], { cwd: root, emulator, env });
    const plan = JSON.parse(json.stdout) as { changes: { kind: string; reason?: string }[] };
    const reason = plan.changes.find((c) => c.kind === 'inventory')?.reason ?? '';
    expect(reason).toMatch(/bind the source id to origin `path:[^`]*\/or\\ig`$/);
  }, 30_000);
});
