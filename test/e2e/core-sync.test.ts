/**
 * Issue 2's end-to-end promises: the CLI against the emulator over real HTTP on 127.0.0.1.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  cli,
  copyExamples,
  type Emulator,
  removeDir,
  requestsSince,
  serviceYaml,
  startTestEmulator,
  tempDir,
  writeFiles,
  writesSince,
} from './harness.js';

let emulator: Emulator;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  dir = await copyExamples();
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

describe('syncing examples/ to the emulator', () => {
  it('applies, then a second plan reports zero changes and a second apply sends zero writes', async () => {
    const first = await cli(['apply', '--dir', '.', '--plan-log', 'log1.jsonl'], { emulator, cwd: dir });
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);

    const plan = await cli(['plan', '--dir', '.', '--output', 'json', '--detailed-exitcode'], { emulator, cwd: dir });
    expect(plan.code).toBe(0);
    const parsed = JSON.parse(plan.stdout) as { summary: Record<string, number>; changes: { action: string }[] };
    expect(parsed.summary).toMatchObject({ create: 0, update: 0, delete: 0, archive: 0 });
    expect(parsed.summary.noop).toBeGreaterThanOrEqual(12);

    const before = emulator.requests.length;
    const second = await cli(['apply', '--dir', '.', '--plan-log', 'log2.jsonl'], { emulator, cwd: dir });
    expect(second.code).toBe(0);
    expect(writesSince(emulator, before)).toEqual([]);
  });

  it('plan and apply --dry-run send only GET requests', async () => {
    const before = emulator.requests.length;
    const plan = await cli(['plan', '--dir', '.'], { emulator, cwd: dir });
    expect(plan.code).toBe(0);
    const dry = await cli(['apply', '--dir', '.', '--dry-run'], { emulator, cwd: dir });
    expect(dry.code).toBe(0);
    const sent = requestsSince(emulator, before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(dry.stdout).toContain('create');
  });

  it('writes a plan log line per API operation with the fields the README names', async () => {
    const run = await cli(['apply', '--dir', '.', '--plan-log', 'plan-log.jsonl'], { emulator, cwd: dir });
    expect(run.code).toBe(0);
    const lines = (await readFile(join(dir, 'plan-log.jsonl'), 'utf8')).trim().split('\n');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    // Every write the emulator saw is in the log (reads made during the apply are logged too).
    expect(entries.filter((e) => e.method !== 'GET').length).toBe(writesSince(emulator, 0).length);
    for (const entry of entries) {
      for (const field of [
        'ts',
        'kind',
        'id',
        'action',
        'method',
        'path',
        'status',
        'attempts',
        'durationMs',
        'outcome',
      ]) {
        expect(entry).toHaveProperty(field);
      }
      expect(entry.outcome).toBe('ok');
    }
    expect(entries.some((e) => e.kind === 'entity' && e.id === 'payments-api' && e.action === 'create')).toBe(true);
  });
});

describe('invalid manifests', () => {
  it('a broken YAML file and a descriptor without x-cortex-tag: validate and apply exit 1, name both files with a line, write nothing', async () => {
    await writeFiles(dir, {
      '.cortex/catalog/broken.yaml': 'openapi: 3.0.1\ninfo:\n  title: Broken\n  x-cortex-tag: [unclosed\n',
      'services/untagged/cortex.yaml': 'openapi: 3.0.1\ninfo:\n  title: No tag here\n  x-cortex-type: service\n',
    });
    const validate = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/\.cortex\/catalog\/broken\.yaml:\d+:\d+/);
    expect(validate.stderr).toMatch(/services\/untagged\/cortex\.yaml:\d+:\d+/);

    const before = emulator.requests.length;
    const apply = await cli(['apply', '--dir', '.'], { emulator, cwd: dir });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/\.cortex\/catalog\/broken\.yaml:\d+/);
    expect(apply.stderr).toMatch(/services\/untagged\/cortex\.yaml:\d+/);
    expect(writesSince(emulator, before)).toEqual([]);
  });
});

describe('the API key', () => {
  it('never appears in stdout, stderr or the plan log — on success, on a 401 and across retries', async () => {
    const outputs: string[] = [];
    emulator.setFaults({ failRate: 0.2 });
    const ok = await cli(['apply', '--dir', '.', '--plan-log', 'a.jsonl', '--debug'], { emulator, cwd: dir });
    outputs.push(ok.stdout, ok.stderr, await readFile(join(dir, 'a.jsonl'), 'utf8'));
    emulator.setFaults({});

    const unauthorized = await cli(['apply', '--dir', '.', '--plan-log', 'b.jsonl', '--debug'], {
      emulator,
      cwd: dir,
      env: { CORTEX_API_KEY: 'wrong-secret-key-zyxwvutsrqponm' },
    });
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/401/);
    outputs.push(unauthorized.stdout, unauthorized.stderr);
    const logs = await readdir(dir);
    if (logs.includes('b.jsonl')) outputs.push(await readFile(join(dir, 'b.jsonl'), 'utf8'));

    for (const text of outputs) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain('wrong-secret-key-zyxwvutsrqponm');
    }
  });
});

describe('rate limiting', () => {
  it('after a 429 with Retry-After: 1 no request starts within the next second, and the apply converges', async () => {
    // A server limiting harder than the client's default (600/min, a bucket of 10): it answers
    // 429s with Retry-After: 1 until the client has learned its rate. (A fault that refuses every
    // k-th request whatever the rate is no limiter: a client that learns its rate slows down
    // against it without end.)
    const limited = await startTestEmulator({ rateLimitPerMinute: 600, rateLimitBurst: 10 });
    let run: Awaited<ReturnType<typeof cli>>;
    let again: Awaited<ReturnType<typeof cli>>;
    let log: typeof limited.requests;
    try {
      run = await cli(['apply', '--dir', '.', '--plan-log', 'log.jsonl'], { emulator: limited, cwd: dir });
      log = limited.requests.filter((r) => !r.path.startsWith('/_emulator'));
      again = await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator: limited, cwd: dir });
    } finally {
      await limited.stop();
    }
    expect(run.code).toBe(0);
    const throttled = log.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    // Requests already on the wire when the 429 was answered (sent concurrently, before the
    // client could read it) arrive within a few milliseconds; anything later must wait a second.
    const inFlightMs = 50;
    for (const hit of throttled) {
      const answeredAt = hit.ts + hit.durationMs;
      const tooEarly = log.filter((r) => r.ts > answeredAt + inFlightMs && r.ts < answeredAt + 1000);
      expect(tooEarly).toEqual([]);
    }
    expect(again.code).toBe(0);
  });
});

// The figure at scale (a no-op plan of 1,000 and 10,000 entities: at most 27 and 216 requests) is
// the benchmark's (`packages/bench`, goals `no-op plan of N entities`); here the same behaviour on
// ten times more entities than the requests a plan may make: reads are by page, never one per object.
describe('scale', () => {
  it('with 300 entities in sync, plan makes at most 30 requests', async () => {
    const big = await tempDir();
    try {
      const files: Record<string, string> = { 'cortex-sync.yaml': 'sourceId: scale-test\n' };
      for (let i = 0; i < 300; i++) {
        files[`.cortex/catalog/svc-${i}.yaml`] = serviceYaml(
          `svc-${i}`,
          `  x-cortex-groups: [tier-${i % 3}]\n  x-cortex-custom-metadata:\n    index: ${i}\n`,
        );
      }
      await writeFiles(big, files);
      const apply = await cli(['apply', '--dir', '.', '--plan-log', 'log.jsonl', '--concurrency', '16'], {
        emulator,
        cwd: big,
        env: { CORTEX_RATE_LIMIT: '100000' },
      });
      expect(apply.code).toBe(0);
      const before = emulator.requests.length;
      const plan = await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: big });
      expect(plan.code).toBe(0);
      expect(requestsSince(emulator, before).length).toBeLessThanOrEqual(30);
    } finally {
      await removeDir(big);
    }
  }, 120_000);
});
