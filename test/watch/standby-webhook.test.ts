/**
 * A push delivered to a standby replica: the standby runs nothing, and says so (503, Retry-After,
 * naming the leader) rather than 202, so that the sender sees the push was not taken there; it does
 * not remember the delivery, so that the same delivery sent again once it leads is taken. A ping
 * is answered as by any replica.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { signBody } from '../../src/watch/webhook.js';
import { startFakeLeaseApi, type FakeLeaseApi } from './fake-lease-api.js';
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
let leases: FakeLeaseApi;
let root: string;
const running: RunningWatch[] = [];

beforeEach(async () => {
  emulator = await startTestEmulator();
  leases = await startFakeLeaseApi();
  root = await tempDir();
});
afterEach(async () => {
  for (const w of running.splice(0)) await w.stop();
  await leases.stop();
  await emulator.stop();
  await removeDir(root);
});

type Role = { role?: string; leader?: string; identity?: string };
const roleOf = async (w: RunningWatch): Promise<Role> => (await (await fetch(`${w.url}/status`)).json()) as Role;

const replica = async (name: string): Promise<RunningWatch> => {
  const kubeconfig = join(root, `kubeconfig-${name}`);
  await leases.kubeconfig(kubeconfig, `token-${name}`, 'team');
  const w = await startWatch(
    {
      dir: 'manifests',
      leaderElect: true,
      leaseName: 'cortex-sync',
      leaseNamespace: 'team',
      leaseDuration: 6000,
      renewDeadline: 4000,
      retryPeriod: 500,
    },
    {
      emulator,
      cwd: root,
      env: {
        KUBECONFIG: kubeconfig,
        CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET,
        CORTEX_SYNC_CACHE_DIR: join(root, `cache-${name}`),
      },
    },
  );
  running.push(w);
  return w;
};

const until = async (what: () => Promise<boolean>, why: string, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${why}`);
    await sleep(50);
  }
};

const deliver = (w: RunningWatch, event: string, delivery: string) => {
  const body = JSON.stringify(
    event === 'ping'
      ? { zen: 'Keep it logically awesome.', hook_id: 1 }
      : { ref: 'refs/heads/main', after: 'abc', repository: { clone_url: 'https://github.com/acme/catalog.git' } },
  );
  return fetch(`${w.url}/webhook/github`, {
    method: 'POST',
    headers: {
      'X-GitHub-Event': event,
      'X-GitHub-Delivery': delivery,
      'X-Hub-Signature-256': signBody(body, WEBHOOK_SECRET),
      'Content-Type': 'application/json',
    },
    body,
  });
};

it('a standby answers a push 503 naming the leader, remembers nothing of it, and answers a ping', async () => {
  await writeFiles(join(root, 'manifests'), {
    'cortex-sync.yaml': CONFIG_YAML,
    '.cortex/catalog/svc.yaml': serviceYaml('svc'),
  });
  const a = await replica('a');
  await until(async () => (await roleOf(a)).role === 'leader', 'a leads');
  const leader = (await roleOf(a)).identity ?? '';
  expect(leader).not.toBe('');
  const b = await replica('b');
  await until(async () => {
    const seen = await roleOf(b);
    return seen.role === 'standby' && seen.leader === leader;
  }, 'b stands by and knows who leads');

  const refused = await deliver(b, 'push', 'delivery-1');
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('5');
  const said = (await refused.json()) as { error: string };
  expect(said.error).toContain('standby');
  expect(said.error).toContain(leader);
  expect(await (await fetch(`${b.url}/metrics`)).text()).toMatch(
    /^cortex_sync_webhook_deliveries_total\{status="503"\} 1$/m,
  );
  const ping = await deliver(b, 'ping', 'delivery-ping');
  expect(ping.status).toBe(200);

  // The leader steps down (gives the Lease back); b leads at its next try and takes the same delivery.
  await a.stop();
  running.splice(running.indexOf(a), 1);
  await until(async () => (await roleOf(b)).role === 'leader', 'b leads');
  const again = await deliver(b, 'push', 'delivery-1');
  // Taken, not "received before": no source follows that repository here, so it runs nothing.
  expect(again.status).toBe(202);
  expect(await again.json()).toMatchObject({ triggered: false });
}, 60_000);
