/**
 * The watcher's pure parts: durations as the interface writes them, webhook signatures, the
 * serial runner (one run at a time, coalescing, backoff, stop), log redaction.
 */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/watch/duration.js';
import { createLogger } from '../../src/watch/log.js';
import { backoffDelay, SerialRunner, type Trigger } from '../../src/watch/runner.js';
import { decideDelivery, signBody, verifySignature } from '../../src/watch/webhook.js';

describe('durations', () => {
  it('reads the forms the interface documents, and 0 as off', () => {
    expect(['500ms', '30s', '1m', '10m', '1h', '0', '1.5s'].map(parseDuration)).toEqual([
      500, 30_000, 60_000, 600_000, 3_600_000, 0, 1500,
    ]);
  });
  it.each(['', '10', '5 m', '-1s', '1d', 'soon'])('rejects %j naming the value', (value) => {
    expect(() => parseDuration(value)).toThrow(`got '${value}'`);
  });
});

describe('webhook signatures', () => {
  const body = Buffer.from('{"ref":"refs/heads/main"}');
  it('accepts the HMAC-SHA256 GitHub sends and nothing else', () => {
    const good = signBody(body, 'sekrit');
    expect(verifySignature(body, good, 'sekrit')).toBe(true);
    expect(verifySignature(body, good, 'other')).toBe(false);
    expect(verifySignature(Buffer.from(`${body} `), good, 'sekrit')).toBe(false);
    expect(verifySignature(body, undefined, 'sekrit')).toBe(false);
    expect(verifySignature(body, good.replace('sha256=', 'sha1='), 'sekrit')).toBe(false);
    expect(verifySignature(body, 'sha256=abc', 'sekrit')).toBe(false);
    expect(verifySignature(body, good, '')).toBe(false);
  });
  it('triggers only on pushes to the followed branch', () => {
    expect(decideDelivery('push', body, 'main')).toEqual({ trigger: true });
    expect(decideDelivery('push', Buffer.from('{"ref":"refs/heads/dev"}'), 'main')).toMatchObject({ trigger: false });
    expect(decideDelivery('push', Buffer.from('{"ref":"refs/tags/v1"}'), 'main')).toMatchObject({ trigger: false });
    expect(decideDelivery('ping', body, 'main')).toMatchObject({ trigger: false, status: 200 });
    expect(decideDelivery('issues', body, 'main')).toMatchObject({ trigger: false });
    expect(decideDelivery('push', Buffer.from('not json'), 'main')).toMatchObject({ trigger: false, status: 400 });
  });
});

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

describe('the serial runner', () => {
  it('runs one at a time and coalesces triggers during a run into one follow-up', async () => {
    const started: Trigger[] = [];
    let active = 0;
    let maxActive = 0;
    const gates = [deferred(), deferred()];
    const runner = new SerialRunner({
      run: async (trigger) => {
        started.push(trigger);
        active += 1;
        maxActive = Math.max(maxActive, active);
        await gates[started.length - 1]?.promise;
        active -= 1;
        return { ok: true, retry: false };
      },
    });
    runner.trigger('startup');
    runner.trigger('commit');
    runner.trigger('webhook');
    runner.trigger('heal');
    expect(runner.state()).toMatchObject({ running: true, pending: 'commit' });
    gates[0]?.resolve();
    gates[1]?.resolve();
    await new Promise((r) => setTimeout(r, 10));
    await runner.idle();
    expect(started).toEqual(['startup', 'commit']);
    expect(maxActive).toBe(1);
  });

  it('backs off exponentially up to a cap after failures, survives a throwing run, resets on success', async () => {
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(n, { baseMs: 100, maxMs: 500 }))).toEqual([
      100, 200, 400, 500, 500,
    ]);
    const results = [
      () => Promise.reject(new Error('boom')),
      () => Promise.resolve({ ok: false, retry: true }),
      () => Promise.resolve({ ok: true, retry: false }),
    ];
    const crashes: unknown[] = [];
    const delays: number[] = [];
    const triggers: Trigger[] = [];
    const done = deferred();
    const runner = new SerialRunner({
      run: (trigger) => {
        triggers.push(trigger);
        const next = results.shift();
        if (!next) return Promise.resolve({ ok: true, retry: false });
        const out = next();
        if (results.length === 0) void out.then(() => setTimeout(done.resolve, 1));
        return out;
      },
      backoff: { baseMs: 5, maxMs: 1000 },
      onCrash: (e) => crashes.push(e),
      onBackoff: (ms) => delays.push(ms),
    });
    runner.trigger('startup');
    await done.promise;
    await runner.idle();
    expect(triggers).toEqual(['startup', 'retry', 'retry']);
    expect(delays).toEqual([5, 10]);
    expect(crashes).toHaveLength(1);
    expect(runner.state()).toMatchObject({ failures: 0, running: false });
  });

  it('does not retry a failure that no retry can fix (bad manifests)', async () => {
    let runs = 0;
    const runner = new SerialRunner({
      run: async () => ({ ok: (runs += 1) < 0, retry: false }),
      backoff: { baseMs: 1 },
    });
    runner.trigger('commit');
    await runner.idle();
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toBe(1);
    expect(runner.state().backoff).toBeUndefined();
  });

  it('stop() aborts the current run and reports whether it finished within the deadline', async () => {
    const runner = new SerialRunner({
      run: (_t, signal) =>
        new Promise((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, retry: true }))),
    });
    runner.trigger('startup');
    expect(await runner.stop(1000)).toBe('finished');
    runner.trigger('commit');
    expect(runner.state().running).toBe(false);

    const stuck = new SerialRunner({ run: () => new Promise(() => {}) });
    stuck.trigger('startup');
    expect(await stuck.stop(10)).toBe('timed-out');
  });
});

describe('logs', () => {
  it('are JSON lines with level, msg and fields, and never hold a secret', () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l), secrets: ['key-123456', 'whsec'], now: () => 0 });
    log.with({ runId: 'run-1', revision: 'abc' }).error('failed with key-123456', { error: { detail: 'x whsec y' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    const parsed: unknown = JSON.parse(lines[0] ?? '');
    expect(parsed).toEqual({
      ts: '1970-01-01T00:00:00.000Z',
      level: 'error',
      msg: 'failed with [REDACTED]',
      runId: 'run-1',
      revision: 'abc',
      error: { detail: 'x [REDACTED] y' },
    });
  });
});
