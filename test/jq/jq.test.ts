/**
 * The jq evaluator behind the inbound webhook and `webhook-route`: real jq semantics, and limits
 * that keep a hostile program from taking the process down.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createJqEvaluator, type JqEvaluator } from '../../src/jq/jq.js';

const open: JqEvaluator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
});
const evaluator = (options: Parameters<typeof createJqEvaluator>[0] = {}) => {
  const e = createJqEvaluator(options);
  open.push(e);
  return e;
};

// Text, not JSON.stringify: the id is larger than a double holds exactly.
const payload = '{"a": {"b": "x", "tag": "payments-api"}, "n": null, "list": [1, 2], "id": 12345678901234567890}';

describe('jq programs evaluate with real jq semantics', () => {
  it('select, pipes, alternative, @text, iteration and empty', async () => {
    const jq = evaluator();
    expect(await jq.evaluate('.a | select(.b == "x") | .tag', payload)).toEqual({
      ok: true,
      outputs: ['payments-api'],
    });
    expect(await jq.evaluate('.a | select(.b == "y") | .tag', payload)).toEqual({ ok: true, outputs: [] });
    expect(await jq.evaluate('.n // "fallback"', payload)).toEqual({ ok: true, outputs: ['fallback'] });
    expect(await jq.evaluate('.list[0] | @text', payload)).toEqual({ ok: true, outputs: ['1'] });
    expect(await jq.evaluate('.list[]', payload)).toEqual({ ok: true, outputs: [1, 2] });
    expect(await jq.evaluate('"\\(.a.tag)-\\(.list | length)"', payload)).toEqual({
      ok: true,
      outputs: ['payments-api-2'],
    });
  });

  it('keeps a large integer of the payload exact when turning it into text', async () => {
    const jq = evaluator();
    expect(await jq.evaluate('.id | tostring', payload)).toEqual({ ok: true, outputs: ['12345678901234567890'] });
  });

  it('reports a runtime error, error(), and a program that does not compile, with jq message', async () => {
    const jq = evaluator();
    expect(await jq.evaluate('.list | .foo', payload)).toEqual({
      ok: false,
      reason: 'error',
      message: 'Cannot index array with string ("foo")',
    });
    expect(await jq.evaluate('error("no tag here")', payload)).toEqual({
      ok: false,
      reason: 'error',
      message: 'no tag here',
    });
    const bad = await jq.evaluate('.a |||', payload);
    expect(bad).toMatchObject({ ok: false, reason: 'compile', message: expect.stringContaining('syntax error') });
  });

  it('does not see the process environment', async () => {
    const jq = evaluator();
    process.env.CORTEX_SYNC_JQ_PROBE = 'secret-value';
    try {
      const r = await jq.evaluate('$ENV | tostring', '{}');
      expect(JSON.stringify(r)).not.toContain('secret-value');
    } finally {
      delete process.env.CORTEX_SYNC_JQ_PROBE;
    }
  });
});

describe('limits', () => {
  it('stops a program that never ends, and the next program runs normally', async () => {
    const jq = evaluator({ timeoutMs: 300 });
    const started = Date.now();
    expect(await jq.evaluate('def f: f; f', '{}')).toMatchObject({ ok: false, reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await jq.evaluate('.a', '{"a": 1}')).toEqual({ ok: true, outputs: [1] });
  });

  it('refuses an output above the cap', async () => {
    const jq = evaluator({ maxOutputBytes: 1000 });
    expect(await jq.evaluate('[range(1000)]', 'null')).toMatchObject({ ok: false, reason: 'too-large' });
    expect(await jq.evaluate('[range(10)] | length', 'null')).toEqual({ ok: true, outputs: [10] });
  });

  it('survives a program that fills memory (stopped by time or by jq running out), and goes on', async () => {
    const jq = evaluator({ timeoutMs: 1500 });
    const r = await jq.evaluate('[repeat(.)]', '{"a": "xxxxxxxxxxxxxxxx"}');
    expect(r.ok).toBe(false);
    expect(['timeout', 'crashed']).toContain(r.ok ? '' : r.reason);
    expect(await jq.evaluate('.a', '{"a": 2}')).toEqual({ ok: true, outputs: [2] });
  });

  it('evaluates one program at a time, in order', async () => {
    const jq = evaluator();
    const results = await Promise.all([1, 2, 3].map((n) => jq.evaluate(`. + ${n}`, '10')));
    expect(results).toEqual([11, 12, 13].map((v) => ({ ok: true, outputs: [v] })));
  });
});
