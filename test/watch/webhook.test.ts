/**
 * The webhook route against what an outsider sends: replays (same delivery id, or the same signed
 * body under a new id) run nothing; a trailing slash is the same route; a burst of refused
 * requests is one log line; a smuggling attempt (Content-Length with Transfer-Encoding) and an
 * endless chunked body are refused without a run.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import {
  CONFIG_YAML,
  type Emulator,
  removeDir,
  type RunningWatch,
  serviceYaml,
  sleep,
  startTestEmulator,
  startWatch,
  tempDir,
  WEBHOOK_SECRET,
  writeFiles,
} from './harness.js';

let emulator: Emulator;
let root: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  await writeFiles(join(root, 'manifests'), {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/a.yaml': serviceYaml('svc-a'),
  });
  watch = await startWatch(
    { dir: join(root, 'manifests') },
    { emulator, cwd: root, env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } },
  );
  await watch.waitForRun((r) => r.result === 'applied');
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

const post = (body: string, headers: Record<string, string>, path = '/webhook/github') =>
  fetch(`${watch?.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', ...headers },
    body,
  });

const webhookRuns = async () => (await watch!.status()).runs.filter((r) => r.trigger === 'webhook').length;

/** Sends raw bytes on one connection; resolves with what came back before the server closed it (or 3 s). */
const raw = (bytes: string): Promise<string> =>
  new Promise((resolve) => {
    const { port } = new URL(watch?.url ?? '');
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', () => {});
    const done = () => resolve(answer);
    socket.on('close', done);
    setTimeout(() => {
      socket.destroy();
      done();
    }, 3000);
    socket.write(bytes);
  });

describe('the webhook route', () => {
  it('runs once per delivery: a replay by id, or of the same signed body under a new id, is ignored', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) });
    const signed = { 'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET) };
    expect((await post(body, { ...signed, 'X-GitHub-Delivery': 'delivery-1' })).status).toBe(202);
    await watch!.waitForRun((r) => r.trigger === 'webhook');
    const replay = await post(body, { ...signed, 'X-GitHub-Delivery': 'delivery-1' });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ triggered: false, reason: expect.stringContaining('received before') });
    expect((await post(body, { ...signed, 'X-GitHub-Delivery': 'delivery-2' })).status).toBe(200);
    const other = JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(40) });
    const otherSigned = { 'X-Hub-Signature-256': signBody(other, WEBHOOK_SECRET) };
    expect((await post(other, { ...otherSigned, 'X-GitHub-Delivery': 'delivery-1' })).status).toBe(200);
    await sleep(300);
    expect(await webhookRuns()).toBe(1);
  });

  it('accepts POST /webhook/github/ (trailing slash) as the same route', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'c'.repeat(40) });
    const response = await post(body, { 'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET) }, '/webhook/github/');
    expect(response.status).toBe(202);
    await watch!.waitForRun((r) => r.trigger === 'webhook');
  });

  it('logs a burst of refused deliveries once, not once per request', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    for (let i = 0; i < 20; i += 1) {
      expect((await post(body, { 'X-Hub-Signature-256': signBody(body, `wrong-${i}`) })).status).toBe(401);
    }
    const rejected = () => watch!.logs().filter((l) => String(l.msg).startsWith('webhook'));
    expect(rejected()).toHaveLength(1);
    expect(rejected()[0]).toMatchObject({ level: 'warn', status: 401, reason: 'signature does not match' });
    expect(await webhookRuns()).toBe(0);
    const metrics = await (await fetch(`${watch!.url}/metrics`)).text();
    expect(metrics).toContain('cortex_sync_webhook_deliveries_total{status="401"} 20');
    const stopped = watch!;
    watch = undefined;
    expect(await stopped.stop()).toBe(0);
    // What was counted is said once, at the end of the burst (here: at shutdown).
    expect(stopped.logs().find((l) => l.msg === 'webhooks rejected since the last line')).toMatchObject({
      count: 19,
      reasons: { '401 signature does not match': 19 },
    });
  });

  it('refuses a request with both Content-Length and Transfer-Encoding, and an endless chunked body, running nothing', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const signature = signBody(body, WEBHOOK_SECRET);
    const smuggled = await raw(
      `POST /webhook/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\nX-Hub-Signature-256: ${signature}\r\n` +
        `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /webhook/github HTTP/1.1\r\n\r\n`,
    );
    expect(smuggled).toMatch(/^HTTP\/1\.1 400/);

    const chunk = 'x'.repeat(64 * 1024);
    const chunks = `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(40);
    const head = `POST /webhook/github HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n`;
    // Unsigned: refused on its headers, before any of the body is read.
    expect(await raw(`${head}\r\n${chunks}`)).toMatch(/^HTTP\/1\.1 401/);
    // With a signature of the right shape: read up to the cap, then refused.
    const endless = await raw(`${head}X-Hub-Signature-256: sha256=${'0'.repeat(64)}\r\n\r\n${chunks}`);
    expect(endless).toMatch(/^HTTP\/1\.1 413/);
    await sleep(200);
    expect(await webhookRuns()).toBe(0);
  });
});
