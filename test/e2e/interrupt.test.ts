/**
 * SIGINT / SIGTERM in the middle of an apply, in a real child process (the binary as it ships,
 * bundled from the sources) against the emulator slowed down so the apply is mid-flight.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanLogEntry } from '../../src/core/model.js';
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
  stdout: string;
  stderr: string;
}

const start = (dir: string, source: string): { child: ChildProcess; finished: Promise<Finished> } => {
  const child = spawn(
    process.execPath,
    [entry, 'apply', '--auto-approve', '--dir', dir, '--plan-log', 'log.jsonl', '--concurrency', '1'],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        NO_COLOR: '1',
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY: API_KEY,
        CORTEX_SYNC_SOURCE_ID: source,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const finished = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, finished };
};

/** Resolves once the emulator has received `n` page creations of this run. */
const pagesCreated = async (from: number, n: number): Promise<void> => {
  for (;;) {
    const created = emulator.requests
      .slice(from)
      .filter((r) => r.method === 'POST' && r.path === '/api/v1/catalog-pages').length;
    if (created >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** A repository of PAGES catalog pages named `<prefix>00`… (each test its own, so no two claim one page). */
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

describe('an interrupted apply', () => {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal}: stops starting changes, finishes the one in flight, writes the log, says what was and was not done, exits ${exitCode}`, async () => {
      const dir = await slowApply(signal.toLowerCase());
      try {
        emulator.setFaults({ latencyMs: 150 });
        const from = emulator.requests.length;
        const { child, finished } = start(dir, `github.com/acme/interrupt-${signal}`);
        await pagesCreated(from, 2);
        child.kill(signal);
        const run = await finished;
        emulator.setFaults({});

        expect(run.code).toBe(exitCode);
        expect(run.stderr).toContain(`${signal}: stopping`);
        // Stdout summarises per kind (no line per object) and says where the full list is.
        const perKind = /^ {2}catalog-page: (\d+) created; (\d+) not done$/m.exec(run.stdout);
        expect(perKind, run.stdout).not.toBeNull();
        const doneCount = Number(perKind![1]);
        const notDoneCount = Number(perKind![2]);
        expect(run.stdout).toMatch(/Apply interrupted: \d+ created/);
        expect(run.stdout.slice(run.stdout.indexOf('Apply interrupted'))).not.toMatch(/catalog-page\/[a-z]+\d+/);
        expect(run.stdout).toContain(`Every change, done or not, is in the plan log: ${join(dir, 'log.jsonl')}`);
        expect(doneCount).toBeGreaterThanOrEqual(2);
        expect(notDoneCount).toBeGreaterThan(0);
        expect(doneCount + notDoneCount).toBe(PAGES);

        // What the output calls done is exactly what the workspace has.
        const created = emulator.requests
          .slice(from)
          .filter((r) => r.method === 'POST' && r.path === '/api/v1/catalog-pages' && r.status === 200).length;
        expect(created).toBe(doneCount);

        // The plan log holds every page: the done ones as requests, the others as skipped.
        const log = (await readFile(join(dir, 'log.jsonl'), 'utf8'))
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as PlanLogEntry);
        const pages = log.filter((l) => l.kind === 'catalog-page');
        const doneIds = new Set(pages.filter((l) => l.outcome === 'ok').map((l) => l.id));
        const skippedIds = new Set(pages.filter((l) => l.outcome === 'skipped').map((l) => l.id));
        expect(doneIds.size).toBe(doneCount);
        expect(skippedIds.size).toBe(notDoneCount);
        expect(new Set([...doneIds, ...skippedIds]).size).toBe(PAGES);
        expect(pages.find((l) => l.outcome === 'skipped')?.error).toMatch(/interrupted/);
        // The ownership record was written before the first page.
        const firstPage = log.findIndex((l) => l.kind === 'catalog-page');
        expect(
          log.slice(0, firstPage).some((l) => l.kind === 'inventory' && l.method === 'POST' && l.outcome === 'ok'),
        ).toBe(true);
      } finally {
        emulator.setFaults({});
        await removeDir(dir);
      }
    });
  }

  it('a second signal exits at once', async () => {
    const dir = await slowApply('twice');
    try {
      emulator.setFaults({ latencyMs: 4000 });
      const from = emulator.requests.length;
      const { child, finished } = start(dir, 'github.com/acme/interrupt-twice');
      // Wait until the reads have begun (each now takes 4 s), then ask twice.
      for (;;) {
        if (
          emulator.requests.length > from ||
          (await Promise.race([finished.then(() => true), new Promise((r) => setTimeout(() => r(false), 50))]))
        )
          break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const askedAt = performance.now();
      child.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill('SIGINT');
      const run = await finished;
      expect(run.code).toBe(130);
      expect(run.stderr).toContain('SIGINT again: exiting at once');
      expect(performance.now() - askedAt).toBeLessThan(3000);
    } finally {
      emulator.setFaults({});
      await removeDir(dir);
    }
  });
});
