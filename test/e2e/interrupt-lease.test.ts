/**
 * An interrupted apply gives its lease back: SIGINT, SIGTERM and SIGHUP (a closed terminal, an
 * ssh drop) in a real child process (the binary as it ships) mid-apply against the emulator. The
 * summary is printed, the plan log is complete (every change done or skipped, ending with the
 * lease's release) and the lease record is released, so the next apply takes it at once. A
 * SIGHUP whose stdout is already gone (the closed terminal) still cleans up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import type { PlanLogEntry } from '../../src/core/model.js';
import { leaseTag, readLease } from '../../src/engine/lease.js';
import { bundleCli } from '../support/cli-bundle.js';
import { API_KEY, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

const PAGES = 12;

let emulator: Emulator;
let bundleDir: string;
let entry: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  bundleDir = await tempDir('cortex-sync-bin-');
  entry = await bundleCli(bundleDir);
});
afterAll(async () => {
  await emulator.stop();
  await removeDir(bundleDir);
});

const page = (slug: string): string =>
  `slug: ${slug}\nname: ${slug}\niconTag: Cortex-builtin::Database\nisDraft: false\ntype: FILTER\nfilter:\n  types:\n    include: [service]\n`;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const start = (
  dir: string,
  source: string,
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; finished: Promise<Finished>; stderr: () => string } => {
  const child = spawn(
    process.execPath,
    [entry, 'apply', '--dir', dir, '--plan-log', 'log.jsonl', '--concurrency', '1', '--auto-approve'],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        NO_COLOR: '1',
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: API_KEY,
        CORTEX_SYNC_SOURCE_ID: source,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const finished = new Promise<Finished>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, finished, stderr: () => stderr };
};

/** Resolves once the emulator has received `n` page creations since `from`. */
const pagesCreated = async (from: number, n: number): Promise<void> => {
  for (;;) {
    const created = emulator.requests
      .slice(from)
      .filter((r) => r.method === 'POST' && r.path === '/api/v1/catalog-pages').length;
    if (created >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const slowApply = async (prefix: string) => {
  const dir = await tempDir();
  await writeFiles(
    dir,
    Object.fromEntries(
      Array.from({ length: PAGES }, (_, i) => [
        `.cortex/catalog-pages/${prefix}${String(i).padStart(2, '0')}.yaml`,
        page(`${prefix}${String(i).padStart(2, '0')}`),
      ]),
    ),
  );
  return dir;
};

const client = () => createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });

const planLog = async (dir: string): Promise<PlanLogEntry[]> =>
  (await readFile(join(dir, 'log.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PlanLogEntry);

/** The plan log holds every page (done or skipped) and ends with the lease's release. */
const expectCompleteLog = (log: PlanLogEntry[], source: string): void => {
  const pages = new Set(log.filter((l) => l.kind === 'catalog-page').map((l) => l.id));
  expect(pages.size).toBe(PAGES);
  expect(log.filter((l) => l.kind === 'catalog-page').every((l) => l.outcome === 'ok' || l.outcome === 'skipped')).toBe(
    true,
  );
  expect(log.at(-1)).toMatchObject({ kind: 'inventory', id: leaseTag(source), method: 'POST', outcome: 'ok' });
};

describe('an interrupted apply gives its lease back', () => {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: prints its summary, completes the plan log, releases the lease; the next apply takes it at once`, async () => {
      const dir = await slowApply(`lease${signal.toLowerCase()}`);
      const source = `github.com/acme/interrupt-lease-${signal}`;
      const api = client();
      try {
        emulator.setFaults({ latencyMs: 150 });
        const from = emulator.requests.length;
        const { child, finished } = start(dir, source);
        await pagesCreated(from, 2);
        child.kill(signal);
        const run = await finished;
        emulator.setFaults({});

        expect(run.code, run.stderr).toBe(exitCode);
        expect(run.stderr).toContain(`${signal}: stopping`);
        expect(run.stdout).toMatch(/Apply interrupted: \d+ created/);
        expect(run.stdout).toContain(`Every change, done or not, is in the plan log: ${join(dir, 'log.jsonl')}`);
        expectCompleteLog(await planLog(dir), source);
        // The lease is given back, by the run that held it.
        const lease = await readLease(api, source);
        expect(lease?.expiresAt).toBe(0);
        expect(lease?.holder).toMatch(/ run [0-9a-f]{8}$/);

        // The next apply does not wait for it.
        const next = await start(dir, source, { CORTEX_SYNC_LEASE_WAIT: '0' }).finished;
        expect(next.code, next.stderr).toBe(0);
        expect(next.stderr).not.toMatch(/Waiting for the apply lease/);
      } finally {
        emulator.setFaults({});
        await api.close();
        await removeDir(dir);
      }
    });
  }

  it('SIGHUP while the lease is being taken (claimed, not yet confirmed): the claim is given back', async () => {
    const dir = await slowApply('hupclaim');
    const source = 'github.com/acme/interrupt-lease-hup-claim';
    const api = client();
    try {
      emulator.setFaults({ latencyMs: 150 });
      const { child, finished } = start(dir, source);
      // The claim is written; the apply now waits a second before reading it back.
      while (!((await readLease(api, source))?.expiresAt ?? 0)) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGHUP');
      const run = await finished;
      emulator.setFaults({});
      expect(run.code, run.stderr).toBe(129);
      expect((await readLease(api, source))?.expiresAt).toBe(0);
    } finally {
      emulator.setFaults({});
      await api.close();
      await removeDir(dir);
    }
  });

  it('SIGHUP twice (the kernel and the shell both hang up): still a clean stop, not an exit at once', async () => {
    const dir = await slowApply('huptwice');
    const source = 'github.com/acme/interrupt-lease-hup-twice';
    const api = client();
    try {
      emulator.setFaults({ latencyMs: 150 });
      const from = emulator.requests.length;
      const { child, finished, stderr } = start(dir, source);
      await pagesCreated(from, 2);
      child.kill('SIGHUP');
      // The second hangup comes once the first was seen (two at once are one to the process).
      while (!stderr().includes('SIGHUP: stopping')) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGHUP');
      const run = await finished;
      emulator.setFaults({});
      expect(run.code, run.stderr).toBe(129);
      expect(run.stderr).not.toMatch(/exiting at once/);
      // What it says is what it does: another hangup does not exit at once.
      expect(run.stderr).toContain('SIGHUP: stopping (SIGINT or SIGTERM to exit at once)');
      expect(run.stdout).toMatch(/Apply interrupted: \d+ created/);
      expectCompleteLog(await planLog(dir), source);
      expect((await readLease(api, source))?.expiresAt).toBe(0);
    } finally {
      emulator.setFaults({});
      await api.close();
      await removeDir(dir);
    }
  });

  it('SIGHUP with its terminal gone (stdout and stderr closed): no crash, the plan log is complete, the lease is released', async () => {
    const dir = await slowApply('hupclosed');
    const source = 'github.com/acme/interrupt-lease-hup-closed';
    const api = client();
    try {
      emulator.setFaults({ latencyMs: 150 });
      const from = emulator.requests.length;
      const { child, finished } = start(dir, source);
      await pagesCreated(from, 2);
      // The terminal closes: nobody reads the output any more, then the hangup.
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.kill('SIGHUP');
      const run = await finished;
      emulator.setFaults({});

      expect(run.signal).toBeNull();
      expect(run.code).toBe(129);
      expectCompleteLog(await planLog(dir), source);
      expect((await readLease(api, source))?.expiresAt).toBe(0);
    } finally {
      emulator.setFaults({});
      await api.close();
      await removeDir(dir);
    }
  });
});
