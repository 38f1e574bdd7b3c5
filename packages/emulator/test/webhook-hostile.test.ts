/**
 * The emulator's inbound webhook against a hostile integration or sender: an Entity tag JQ that
 * tries to close the compile check's wrapper (and so run at registration) is refused; deliveries
 * beyond the queue bound are answered 503 at once; a payload nested deeper than jq reads is a 400.
 */
import { expect, it } from 'vitest';
import { createJqEvaluator } from '../../../src/jq/jq.js';
import { call, descriptor, start } from './helpers.js';

it('refuses an Entity tag JQ that closes the compile check early, and never runs it', async () => {
  const emu = await start();
  for (const entityTagJq of [
    '1) else (def f: f; f) end | if false then (1',
    '.a) else ([limit(3; repeat(1))] | length) end | if false then (.a',
    '"\\(1)" ) else (def f: f; f) end | if false then (1',
  ]) {
    const r = await call(emu, 'POST', '/_emulator/custom-integrations', {
      key: null,
      body: { name: 'x', entityTagJq, key: 'k' },
    });
    expect(r.status, entityTagJq).toBe(400);
    expect(r.text).toContain('is not a jq program');
  }
  for (const entityTagJq of ['"a)b" | .', '"\\(.a | (1))" | .', '.x # ) comment\n', '[.a, {b: (1)}] | .[0]']) {
    const ok = await call(emu, 'POST', '/_emulator/custom-integrations', {
      key: null,
      body: { name: 'x', entityTagJq, key: 'k' },
    });
    expect(ok.status, entityTagJq).toBe(200);
  }
});

it('answers deliveries beyond the queue bound with 503, and a payload nested past jq’s depth with 400', async () => {
  const jq = createJqEvaluator({ maxQueued: 2, timeoutMs: 60_000 });
  try {
    const slow = 'last(range(3000000))';
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => jq.evaluate(slow, 'null')));
    expect(outcomes.filter((o) => !o.ok && o.reason === 'busy')).toHaveLength(2);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
  } finally {
    await jq.close();
  }

  const emu = await start();
  await call(emu, 'POST', '/api/v1/open-api', {
    body: descriptor('svc'),
    contentType: 'application/openapi;charset=UTF-8',
  });
  const hook = await call(emu, 'POST', '/_emulator/custom-integrations', {
    key: null,
    body: { name: 'x', entityTagJq: '.tag', key: 'k' },
  });
  const { url } = JSON.parse(hook.text) as { url: string };
  const deep = `{"tag":"svc","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deep });
  expect(res.status).toBe(400);
});
