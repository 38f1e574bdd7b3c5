/**
 * What `apply` says about itself is what happened: a declined apply names what it wrote, the plan
 * log is named only when it exists, the summary is said once, every warning once, and counts take
 * their plural. Against the emulator on 127.0.0.1.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PlanLogEntry } from '../../src/core/model.js';
import { leaseTag } from '../../src/engine/lease.js';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

const writesSince = (from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

const logLines = async (file: string): Promise<PlanLogEntry[]> =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PlanLogEntry);

describe('a declined apply', () => {
  it('names what it wrote (the apply lease record, nothing else) and where the plan log is', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('declined-0') });
    const before = emulator.requests.length;
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'declined-src', NO_COLOR: '1' },
      tty: true,
      input: 'no\n',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('nothing was written');
    const lease = `inventory/${leaseTag('declined-src')}`;
    const said = new RegExp(
      `Apply cancelled: no change was applied; the only writes were (\\d+) requests? to the apply lease record \`${lease}\` \\(plan log: ${join(dir, 'log.jsonl').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)\\.`,
    ).exec(run.stderr);
    expect(said, run.stderr).not.toBeNull();
    // What it says is what the workspace saw, and what the plan log holds.
    const written = writesSince(before);
    expect(written.length).toBe(Number(said![1]));
    const logged = (await logLines(join(dir, 'log.jsonl'))).filter((l) => l.method !== 'GET');
    expect(logged.map((l) => `${l.kind}/${l.id}`)).toEqual(written.map(() => lease));
  });

  it('without a source id (no lease) says nothing was written, and leaves no plan log', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('declined-1') });
    const before = emulator.requests.length;
    const run = await cli(['apply'], { cwd: dir, emulator, env: { NO_COLOR: '1' }, tty: true, input: 'no\n' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Apply cancelled: nothing was written.');
    expect(writesSince(before)).toEqual([]);
    expect(await readdir(dir)).toEqual(['svc']);
  });
});

describe('the plan log', () => {
  it('an apply with nothing to do names no plan log and leaves none (nor its folder)', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('noop-0') });
    const env = { CORTEX_SYNC_SOURCE_ID: 'noop-src' };
    expect((await cli(['apply', '--plan-log', 'first.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    const run = await cli(['apply'], { cwd: dir, emulator, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('No changes.');
    expect(run.stdout).not.toMatch(/Plan log/i);
    expect((await readdir(dir)).sort()).toEqual(['first.jsonl', 'svc']);
  });

  it('an apply that timed out waiting for the lease leaves no plan log of its reads', async () => {
    const other = await tempDir();
    try {
      // Apply A of the same source holds the lease while it writes slowly.
      await writeFiles(
        other,
        Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}/cortex.yaml`, serviceYaml(`lease-a-${i}`)])),
      );
      await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('lease-b-0') });
      const env = { CORTEX_SYNC_SOURCE_ID: 'lease-src', CORTEX_SYNC_LEASE_WAIT: '1' };
      emulator.setFaults({ latencyMs: 100 });
      const from = emulator.requests.length;
      const first = cli(['apply', '--plan-log', 'log.jsonl'], { cwd: other, emulator, env });
      while (!emulator.requests.slice(from).some((r) => r.method === 'POST' && r.path === '/api/v1/open-api'))
        await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await cli(['apply', '--plan-log', 'log.jsonl'], { cwd: dir, emulator, env });
      emulator.setFaults({});
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/another apply of this source is running/);
      expect(second.stdout + second.stderr).not.toMatch(/Plan log/i);
      expect(await readdir(dir)).toEqual(['svc']);
      expect((await first).code).toBe(0);
    } finally {
      emulator.setFaults({});
      await removeDir(other);
    }
  }, 60_000);
});

describe('a plan against a rate-limited server', () => {
  it('says at once that it pauses for Retry-After, and what it is doing', async () => {
    await writeFiles(dir, {
      'cortex-sync.yaml': 'sourceId: paused-src\n',
      '.cortex/dependencies/a.yaml': 'callerTag: a\ndependencies:\n  - tag: b\n',
      '.cortex/dependencies/c.yaml': 'callerTag: c\ndependencies:\n  - tag: b\n',
    });
    emulator.setFaults({ every429: 6, retryAfterSeconds: 1 });
    try {
      const run = await cli(['plan'], { cwd: dir, emulator, env: {} });
      expect(run.stderr).toContain('Paused 1 s: the API asked to wait (Retry-After); reading goes on after.');
    } finally {
      emulator.setFaults({});
    }
  }, 30_000);
});

describe('the end of an apply', () => {
  it('one summary line, then the write requests sent; each warning once; no "(s)" anywhere', async () => {
    await writeFiles(dir, {
      '.cortex/entity-types/gizmo.yaml': 'type: gizmo\nname: Gizmo\niconTag: my-icon\nschema: {}\n',
      '.cortex/catalog/g1.yaml': `${serviceYaml('msg-g1').replace('x-cortex-type: service', 'x-cortex-type: gizmo')}  x-cortex-definition: {}\n`,
    });
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'summary-src' },
    });
    expect(run.code).toBe(0);
    const out = run.stdout + run.stderr;
    expect(out.match(/Apply complete/g)?.length).toBe(1);
    expect(run.stdout).toMatch(
      /^Apply complete: 2 created, 0 updated, 0 deleted, 0 archived, 0 unchanged, 1 ownership-record write\.$/m,
    );
    // Every write the plan log holds is counted: the apply's, and the lease's beside them.
    const sent = /^Sent (\d+) write requests in \d+\.\d s, and (\d+) to hold the apply lease\.$/m.exec(run.stdout);
    expect(sent).not.toBeNull();
    const logged = (await readFile(join(dir, 'log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method: string | null; read?: boolean })
      .filter((e) => e.method !== null && e.method !== 'GET' && e.read !== true);
    expect(Number(sent?.[1]) + Number(sent?.[2])).toBe(logged.length);
    expect(out.match(/icon-not-kept/g)?.length).toBe(1);
    expect(out).not.toMatch(/\(s\)/);
  });
});

describe('a base URL without its scheme', () => {
  it.each([
    ['127.0.0.1:8787', 'http://127.0.0.1:8787'],
    ['localhost:8787', 'http://localhost:8787'],
    ['api.example.com', 'https://api.example.com'],
  ])('--base-url %s suggests %s, and nothing is sent', async (given, suggested) => {
    const dir = await tempDir();
    try {
      await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('scheme') });
      const run = await cli(['plan', '--base-url', given], { cwd: dir, env: { CORTEX_API_KEY: 'k-0123456789abcdef' } });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`has no scheme; did you mean ${suggested}?`);
    } finally {
      await removeDir(dir);
    }
  });
});
