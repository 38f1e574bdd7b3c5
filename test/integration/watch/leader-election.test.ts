/**
 * Two replicas of `cortex-sync watch --leader-elect` (the binary, the real Kubernetes client)
 * against a fake Lease API on 127.0.0.1 and the emulator. One leads and the other stands by; the
 * leader whose renewals hang stops writing before the other takes the Lease; the leader killed
 * with SIGKILL is replaced within 20 s and the change that follows is applied; and by the logs of
 * the Lease API (per-process token) and of the emulator (per-process User-Agent), no write of one
 * replica ever falls inside the other's term. Shortened timings (lease 6 s, renew deadline 4 s,
 * retry 1 s) keep it quick; their order is client-go's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeLeaseApi, type FakeLeaseApi } from '../../watch/fake-lease-api.js';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  entityTitle,
  removeDir,
  serviceYaml,
  sleep,
  startTestEmulator,
  tempDir,
  writeFiles,
} from '../../watch/harness.js';

const REPO = join(import.meta.dirname, '..', '..', '..');
const BIN = join(REPO, 'bin', 'cortex-sync.js');
const SERVICES = 300;

let emulator: Emulator;
let leases: FakeLeaseApi;
let root: string;
const children: ChildProcess[] = [];
/** What each replica printed, shown when a wait times out. */
const outputs: Record<string, () => string> = {};

beforeAll(async () => {
  if (!existsSync(join(REPO, 'dist', 'watch', 'sources.js')))
    throw new Error('dist/ has no multi-source watcher: run `npm run build`');
  // Latency spreads an apply over seconds, so that a replica is writing when its renewals stall.
  emulator = await startTestEmulator({ faults: { latencyMs: 30 } });
  leases = await startFakeLeaseApi();
  root = await tempDir();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await emulator.stop();
  await leases.stop();
  await removeDir(root);
});

interface Replica {
  name: string;
  proc: ChildProcess;
  url: string;
  status: () => Promise<{ role?: string; leader?: string; identity?: string }>;
}

const startReplica = async (name: string): Promise<Replica> => {
  const kubeconfig = join(root, `kubeconfig-${name}`);
  await leases.kubeconfig(kubeconfig, `token-${name}`, 'team');
  const proc = spawn(
    process.execPath,
    [
      BIN,
      'watch',
      '--dir',
      'manifests',
      '--listen',
      '127.0.0.1:0',
      '--heal-interval',
      '0',
      '--lease-linger',
      '0',
      '--leader-elect',
      '--lease-namespace',
      'team',
      '--lease-duration',
      '6s',
      '--renew-deadline',
      '4s',
      '--retry-period',
      '1s',
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        CORTEX_API_KEY: API_KEY,
        CORTEX_BASE_URL: emulator.url,
        CORTEX_SYNC_CACHE_DIR: join(root, `cache-${name}`),
        CORTEX_SYNC_CONCURRENCY: '2',
        KUBECONFIG: kubeconfig,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(proc);
  let out = '';
  proc.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  proc.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  outputs[name] = () => out;
  const deadline = Date.now() + 20_000;
  let url: string | undefined;
  while (!(url = /^listening on (\S+)$/m.exec(out)?.[1])) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`${name} did not start: ${out}`);
    await sleep(50);
  }
  const address = url;
  const status = async () =>
    (await (await fetch(`${address}/status`)).json()) as { role?: string; leader?: string; identity?: string };
  return { name, proc, url: address, status };
};

const until = async (what: () => Promise<boolean> | boolean, ms: number, why: string) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) {
      const printed = Object.entries(outputs).map(
        ([name, out]) => `--- ${name}\n${out().split('\n').slice(-25).join('\n')}`,
      );
      throw new Error(`timed out: ${why}\n${printed.join('\n')}`);
    }
    await sleep(100);
  }
};

/** Cortex writes, by the replica whose identity is in the User-Agent. */
const writesBy = (identity: string) =>
  emulator.requests.filter((r) => r.method !== 'GET' && r.agent?.includes(identity) && r.status > 0);

/** When each replica's terms began, from the Lease API's log: a successful write naming a new holder. */
const termsStarted = () => {
  const starts: { holder: string; at: number }[] = [];
  for (const r of leases.requests)
    if (r.method !== 'GET' && r.status < 300 && r.holder && r.holder !== starts.at(-1)?.holder)
      starts.push({ holder: r.holder, at: r.at });
  return starts;
};

it('one replica leads; a stalled leader stops writing before the other leads; a killed one is replaced within 20 s', async () => {
  const files: Record<string, string> = { 'cortex-sync.yaml': CONFIG_YAML };
  for (let i = 0; i < SERVICES; i += 1) files[`.cortex/catalog/svc-${i}.yaml`] = serviceYaml(`svc-${i}`);
  await writeFiles(join(root, 'manifests'), files);

  const a = await startReplica('A');
  await until(async () => (await a.status()).role === 'leader', 15_000, 'A leads');
  const b = await startReplica('B');
  const idA = (await a.status()).identity ?? '';
  await until(async () => (await b.status()).leader === idA, 15_000, 'B sees A lead');
  expect(await b.status()).toEqual({ role: 'standby', leader: idA });
  expect((await fetch(`${b.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
  expect(await (await fetch(`${b.url}/metrics`)).text()).toMatch(/^cortex_sync_leader 0$/m);
  expect(await (await fetch(`${a.url}/metrics`)).text()).toMatch(/^cortex_sync_leader 1$/m);

  // A is writing its first apply; its renewals now hang.
  await until(() => writesBy(idA).length > 10, 30_000, 'A writes');
  leases.stall('token-A');
  await until(async () => (await b.status()).role === 'leader', 30_000, 'B takes over from a stalled A');
  const idB = (await b.status()).identity ?? '';
  leases.unstall('token-A');
  await until(async () => (await a.status()).role === 'standby', 15_000, 'A stands by');
  await until(() => entityTitle(emulator, `svc-${SERVICES - 1}`) !== undefined, 90_000, 'B finishes the apply');
  // Killed between runs (a replica killed in a run leaves the Cortex apply lease until it expires: the second fence).
  await until(async () => JSON.stringify(await b.status()).includes('"result":"applied"'), 30_000, 'B applied');

  // Kill B (the leader) with SIGKILL; change a manifest; A leads again and applies it within 20 s.
  const killedAt = Date.now();
  b.proc.kill('SIGKILL');
  await writeFiles(join(root, 'manifests'), { '.cortex/catalog/svc-0.yaml': serviceYaml('svc-0', 'after failover') });
  await until(() => entityTitle(emulator, 'svc-0') === 'after failover', 20_000, 'A applies the change after B died');
  expect(Date.now() - killedAt).toBeLessThan(20_000);

  // No write of one replica inside the other's term.
  const terms = termsStarted();
  expect(terms.map((t) => t.holder)).toEqual([idA, idB, idA]);
  const [t1, t2, t3] = terms as unknown as [{ at: number }, { at: number }, { at: number }];
  const aWrites = writesBy(idA);
  const summary = JSON.stringify({ terms, a: aWrites.map((r) => r.ts), b: writesBy(idB).map((r) => r.ts) });
  expect(aWrites.length, summary).toBeGreaterThan(0);
  expect(aWrites.filter((r) => r.ts < t1.at || (r.ts >= t2.at && r.ts < t3.at))).toEqual([]);
  const bWrites = writesBy(idB);
  expect(bWrites.length, summary).toBeGreaterThan(0);
  expect(bWrites.every((r) => r.ts >= t2.at && r.ts < t3.at)).toBe(true);
  expect(writesBy(idA).filter((r) => r.ts >= t3.at).length, summary).toBeGreaterThan(0);
}, 180_000);
