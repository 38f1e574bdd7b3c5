/**
 * The watcher's read endpoints against a hostile page and a scrape flood: a `Host` that is a DNS
 * name (a page that rebound its own name to the watcher's address) gets 403 from `/status`,
 * `/metrics` and the probes, while addresses, `localhost` in any case, IPv6 literals and the names
 * given with `--allowed-hosts` are answered, and the signed webhook answers on any name (it comes
 * through an ingress); a flood of scrapes renders the metrics once, and a scrape after a change
 * sees it; a signed delivery that is not a usable push is counted.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import {
  CONFIG_YAML,
  type Emulator,
  removeDir,
  type RunningWatch,
  serviceYaml,
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
    { dir: join(root, 'manifests'), allowedHosts: 'cortex-sync.monitoring.svc, Metrics.Example' },
    { emulator, cwd: root, env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET } },
  );
  await watch.waitForRun((r) => r.result === 'applied');
});
afterEach(async () => {
  vi.restoreAllMocks();
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** A request with the given `Host` header (fetch does not let one set it). */
const withHost = (
  path: string,
  host: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const { port } = new URL(watch?.url ?? '');
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        path,
        method: options.method ?? 'GET',
        headers: { ...options.headers, Host: host },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });

const push = (body: string, host = '127.0.0.1') =>
  withHost('/webhook/github', host, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET),
    },
    body,
  });

describe('the Host header', () => {
  it('refuses a DNS name on every read endpoint, naming the header and the flag', async () => {
    for (const path of ['/status', '/metrics', '/healthz', '/readyz']) {
      for (const host of [
        'rebind.attacker.example',
        'rebind.attacker.example:8080',
        '127.0.0.1.nip.io',
        'localhost.',
      ]) {
        const answer = await withHost(path, host);
        expect(answer.status, `${path} Host ${host}`).toBe(403);
        expect(answer.text).toContain('--allowed-hosts');
        expect(answer.text).not.toContain('"runs"');
      }
    }
  });

  it('answers an address, localhost in any case, an IPv6 literal and a listed name in any case', async () => {
    const { port } = new URL(watch?.url ?? '');
    for (const host of [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      'LOCALHOST',
      `localhost:${port}`,
      '[::1]:8080',
      '[::FFFF:127.0.0.1]',
      '10.1.2.3:8080',
      'cortex-sync.monitoring.svc:8080',
      'metrics.example',
    ]) {
      expect((await withHost('/status', host)).status, host).toBe(200);
    }
  });

  it('takes a signed delivery on any name: GitHub reaches it through an ingress', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) });
    expect((await push(body, 'hooks.example.com')).status).toBe(202);
  });
});

describe('/metrics', () => {
  it('renders once for a flood of scrapes while nothing changes, and a scrape after a change sees it', async () => {
    const renders = vi.spyOn(Registry.prototype, 'metrics');
    const url = `${watch?.url}/metrics`;
    const first = await (await fetch(url)).text();
    const flood = await Promise.all(Array.from({ length: 100 }, async () => (await fetch(url)).text()));
    for (let i = 0; i < 50; i += 1) expect(await (await fetch(url)).text()).toBe(first);
    expect(new Set(flood)).toEqual(new Set([first]));
    expect(renders.mock.calls.length).toBeLessThanOrEqual(1);
    // A change is in the very next scrape.
    const body = JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(40) });
    expect((await push(body)).status).toBe(202);
    expect(await (await fetch(url)).text()).toContain('cortex_sync_webhook_deliveries_total{status="202"} 1');
  });

  it('counts a signed delivery that is not a usable push', async () => {
    expect((await push('this is not JSON')).status).toBe(400);
    expect((await push(JSON.stringify({ after: 'c'.repeat(40) }))).status).toBe(400);
    const text = await (await fetch(`${watch?.url}/metrics`)).text();
    expect(text).toContain('cortex_sync_webhook_deliveries_total{status="400"} 2');
  });
});
