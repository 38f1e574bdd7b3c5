/**
 * The inbound custom webhook, the vendor's rules, over HTTP: an integration
 * made with the control endpoint, payloads posted without a key, routed by tag, then by
 * `x-service-custom-integration-mappings`, stored as custom data with `source: INTEGRATION`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningEmulator } from '../src/server.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Integration = z.looseObject({ id: z.string(), url: z.string() });
const CustomData = z.array(z.looseObject({ key: z.string(), value: z.unknown(), source: z.string() }));

const integration = async (emu: RunningEmulator, entityTagJq: string, key = 'deploy-info') => {
  const r = await call(emu, 'POST', '/_emulator/custom-integrations', {
    key: null,
    body: { name: 'Deploy pipeline', entityTagJq, key },
  });
  expect(r.status).toBe(200);
  return bodyOf(r, Integration);
};

/** Posts a payload to a webhook URL with no Authorization header at all. */
const send = async (url: string, payload: unknown, contentType = 'application/json') => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const text = await res.text();
  return { status: res.status, text };
};

const customData = async (emu: RunningEmulator, tag: string) =>
  bodyOf(await call(emu, 'GET', `/api/v1/catalog/${tag}/custom-data`), CustomData);

const entity = async (emu: RunningEmulator, tag: string, mappings?: unknown[]) => {
  const info = mappings ? { 'x-service-custom-integration-mappings': mappings } : {};
  expect((await call(emu, 'POST', '/api/v1/open-api', { body: descriptor(tag, info) })).status).toBe(200);
};

describe('inbound custom webhook (vendor rules)', () => {
  it('rule 6: needs no key; rule 5: the payload is stored under the integration key as INTEGRATION data', async () => {
    const emu = await start();
    await entity(emu, 'payments-api');
    const hook = await integration(emu, '.data.codeTag');
    expect(hook.url).toBe(`${emu.url}/api/v1/custom-integrations/data/${hook.id}`);
    const payload = { data: { codeTag: 'payments-api', version: '1.4.2' } };
    expect((await send(hook.url, payload)).status).toBe(200);
    expect(await customData(emu, 'payments-api')).toEqual([
      expect.objectContaining({ key: 'deploy-info', value: payload, source: 'INTEGRATION' }),
    ]);
    // One record per key: the next payload replaces it.
    expect((await send(hook.url, { data: { codeTag: 'payments-api', version: '1.4.3' } })).status).toBe(200);
    const [record] = await customData(emu, 'payments-api');
    expect(record?.value).toEqual({ data: { codeTag: 'payments-api', version: '1.4.3' } });
    // The entity's details show it too.
    const details = await call(emu, 'GET', '/api/v1/catalog/payments-api');
    expect(details.json).toMatchObject({ metadata: [{ key: 'deploy-info', source: 'INTEGRATION' }] });
  });

  it('rule 1 and 4: a tag of no entity is a 400 and nothing is stored; once the entity exists it is accepted', async () => {
    const emu = await start();
    await entity(emu, 'other');
    const hook = await integration(emu, '.service');
    const refused = await send(hook.url, { service: 'later-service' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('no entity has the tag `later-service`');
    expect(await customData(emu, 'other')).toEqual([]);
    const state = z.looseObject({ customData: z.looseObject({ byEntity: z.record(z.string(), z.unknown()) }) });
    expect(bodyOf(await call(emu, 'GET', '/_emulator/state', { key: null }), state).customData.byEntity).toEqual({});
    await entity(emu, 'later-service');
    expect((await send(hook.url, { service: 'later-service' })).status).toBe(200);
  });

  it('rule 2 and 3: the tag wins over a mapping; a value no tag has goes to the entity that maps it', async () => {
    const emu = await start();
    await entity(emu, 'left-brain');
    await entity(emu, 'brain', ['left-brain', 'right-brain', 4711]);
    const hook = await integration(emu, '.component');
    expect((await send(hook.url, { component: 'left-brain' })).status).toBe(200);
    expect((await send(hook.url, { component: 'right-brain' })).status).toBe(200);
    expect((await customData(emu, 'left-brain')).map((d) => d.value)).toEqual([{ component: 'left-brain' }]);
    expect((await customData(emu, 'brain')).map((d) => d.value)).toEqual([{ component: 'right-brain' }]);
    // A number from jq is looked up by its JSON text.
    expect((await send(hook.url, { component: 4711 })).status).toBe(200);
    expect((await customData(emu, 'brain')).map((d) => d.value)).toEqual([{ component: 4711 }]);
  });

  it('evaluates the Entity tag JQ with real jq: select, alternative, string interpolation', async () => {
    const emu = await start();
    await entity(emu, 'svc-prod');
    const hook = await integration(emu, '.events[] | select(.kind == "deploy") | "\\(.service // "unknown")-\\(.env)"');
    const payload = {
      events: [
        { kind: 'build', service: 'x' },
        { kind: 'deploy', service: 'svc', env: 'prod' },
      ],
    };
    expect((await send(hook.url, payload)).status).toBe(200);
    expect((await customData(emu, 'svc-prod')).length).toBe(1);
  });

  it('refuses what routes nowhere, with a message saying why, and stores nothing', async () => {
    const emu = await start();
    await entity(emu, 'a', ['shared']);
    await entity(emu, 'b', ['shared']);
    const cases: [string, unknown, string][] = [
      ['.missing', {}, 'gave null'],
      ['.list[]', { list: ['a', 'b'] }, 'gave 2 values'],
      ['empty', {}, 'gave no value'],
      ['.obj', { obj: { tag: 'a' } }, 'a tag is a string'],
      ['.v', { v: 'shared' }, 'registered in x-service-custom-integration-mappings by 2 entities (a, b)'],
      ['.x | error("boom")', { x: 1 }, 'boom'],
    ];
    for (const [jq, payload, message] of cases) {
      const hook = await integration(emu, jq);
      const r = await send(hook.url, payload);
      expect(r.status, jq).toBe(400);
      expect(r.text, jq).toContain(message);
    }
    expect(await customData(emu, 'a')).toEqual([]);
    expect(await customData(emu, 'b')).toEqual([]);
  });

  it('answers 404 for a webhook id that is not one, 415 for a non-JSON body type, 400 for a body that is not JSON', async () => {
    const emu = await start();
    await entity(emu, 'svc');
    const hook = await integration(emu, '.tag');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '..%2F..%2F_emulator%2Freset']) {
      const r = await send(`${emu.url}/api/v1/custom-integrations/data/${id}`, { tag: 'svc' });
      expect(r.status, id).toBe(404);
    }
    expect((await send(hook.url, 'tag=svc', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect((await send(hook.url, '{"tag": "svc"} {"tag": "svc"}')).status).toBe(400);
    expect((await send(hook.url, '')).status).toBe(400);
    expect((await send(hook.url, { tag: 'svc' }, 'application/vnd.pipeline+json')).status).toBe(200);
  });

  it('stays up when the Entity tag JQ never ends: 400 after the time limit, and the next payload works', async () => {
    const emu = await start({ jqTimeoutMs: 300 });
    await entity(emu, 'svc');
    const loop = await integration(emu, 'def f: f; f');
    const started = Date.now();
    const r = await send(loop.url, { tag: 'svc' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('did not finish within 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
    const good = await integration(emu, '.tag');
    expect((await send(good.url, { tag: 'svc' })).status).toBe(200);
  });

  it('takes a payload of 2 MB, and refuses one byte more with 413', async () => {
    const emu = await start();
    await entity(emu, 'svc');
    const hook = await integration(emu, '.tag');
    const limit = 2 * 1024 * 1024;
    const frame = '{"tag":"svc","pad":""}';
    const atLimit = frame.replace('""', `"${'x'.repeat(limit - frame.length)}"`);
    expect(Buffer.byteLength(atLimit)).toBe(limit);
    expect((await send(hook.url, atLimit)).status).toBe(200);
    const over = frame.replace('""', `"${'x'.repeat(limit - frame.length + 1)}"`);
    expect((await send(hook.url, over)).status).toBe(413);
  });

  it('refuses an integration whose Entity tag JQ does not compile, naming the problem', async () => {
    const emu = await start();
    const r = await call(emu, 'POST', '/_emulator/custom-integrations', {
      key: null,
      body: { name: 'x', entityTagJq: '.a |||', key: 'k' },
    });
    expect(r.status).toBe(400);
    expect(r.text).toContain('is not a jq program');
    // Checked by compiling, not running: a program that never ends is accepted at once.
    const started = Date.now();
    for (const entityTagJq of ['def f: f; f', '.tag # the service\n', 'def t: .tag; t']) {
      const ok = await call(emu, 'POST', '/_emulator/custom-integrations', {
        key: null,
        body: { name: 'x', entityTagJq, key: 'k' },
      });
      expect(ok.status, entityTagJq).toBe(200);
    }
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
