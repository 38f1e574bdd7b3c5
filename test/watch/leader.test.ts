/**
 * Leader election against a fake Kubernetes Lease API with the real `@kubernetes/client-node`:
 * one of two candidates leads; a leader whose renewals hang stops being allowed to write before
 * the other takes the Lease; a stopped leader gives the Lease back; a skewed clock changes nothing.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { LeaderElector } from '../../src/watch/leader.js';
import { kubernetesLeaseStore, loadKubeConfig } from '../../src/watch/lease-store.js';
import { startFakeLeaseApi, type FakeLeaseApi } from './fake-lease-api.js';
import { removeDir, sleep, tempDir } from './harness.js';

const TIMING = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };

let api: FakeLeaseApi;
let dir: string;
const electors: LeaderElector[] = [];

beforeEach(async () => {
  api = await startFakeLeaseApi();
  dir = await tempDir();
});
afterEach(async () => {
  for (const e of electors.splice(0)) await e.stop();
  await api.stop();
  await removeDir(dir);
});

/** What happened, in order: `A leads`, `A fenced`, `B leads`, … */
const events: string[] = [];

const candidate = async (name: string, extra: { now?: () => number } = {}) => {
  const file = join(dir, `kubeconfig-${name}`);
  await api.kubeconfig(file, `token-${name}`, 'team');
  const kc = loadKubeConfig({ KUBECONFIG: file });
  const elector: LeaderElector = new LeaderElector({
    store: kubernetesLeaseStore(kc, 'team', 'cortex-sync'),
    identity: name,
    timing: TIMING,
    onStartedLeading: () => events.push(`${name} leads`),
    onStoppedLeading: () => events.push(`${name} stopped`),
    ...extra,
  });
  electors.push(elector);
  return elector;
};

const until = async (what: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error(`timed out; events: ${events.join(', ')}`);
    await sleep(20);
  }
};

beforeEach(() => {
  events.length = 0;
});

it('elects exactly one of two candidates; the other knows who leads', async () => {
  const a = await candidate('A');
  const b = await candidate('B');
  a.start();
  await until(() => a.role === 'leader');
  b.start();
  await sleep(1000);
  expect([a.role, b.role]).toEqual(['leader', 'standby']);
  expect(b.leader).toBe('A');
  expect(b.mayWrite()).toBe(false);
  expect(api.lease('team', 'cortex-sync')?.spec).toMatchObject({ holderIdentity: 'A', leaseDurationSeconds: 2 });
});

it('a leader whose renewals hang stops writing before the other takes the Lease', async () => {
  const a = await candidate('A');
  const b = await candidate('B');
  a.start();
  await until(() => a.role === 'leader');
  b.start();
  await sleep(500);
  // A's fence, sampled often: when did it last allow a write?
  let lastAllowed = 0;
  const sampler = setInterval(() => {
    if (a.mayWrite()) {
      lastAllowed = performance.now();
      events.push('A may write');
    }
  }, 5);
  api.stall('token-A');
  await until(() => b.role === 'leader');
  const bLeadsAt = performance.now();
  clearInterval(sampler);
  api.unstall('token-A');
  // Order, not time: A stopped leading (its runs aborted), then its fence closed, then B led.
  const aStopped = events.indexOf('A stopped');
  const bLeads = events.indexOf('B leads');
  expect(aStopped).toBeGreaterThan(-1);
  expect(aStopped).toBeLessThan(bLeads);
  expect(events.lastIndexOf('A may write')).toBeLessThan(bLeads);
  expect(lastAllowed).toBeLessThan(bLeadsAt);
  // Once answered again, A reads that B holds it and stays a standby.
  await sleep(600);
  expect(a.role).toBe('standby');
  expect(a.leader).toBe('B');
});

it('a leader that stops gives the Lease back, and the standby takes it at its next try', async () => {
  const a = await candidate('A');
  const b = await candidate('B');
  a.start();
  await until(() => a.role === 'leader');
  b.start();
  await sleep(300);
  await a.stop();
  expect(api.lease('team', 'cortex-sync')?.spec.holderIdentity).toBe('');
  // Well before A's lease duration would have run out on B's clock.
  await until(() => b.role === 'leader', 800);
});

it('judges expiry by its own clock: a candidate whose wall clock is an hour off never takes a renewed Lease', async () => {
  const a = await candidate('A');
  const ahead = await candidate('ahead', { now: () => Date.now() + 3_600_000 });
  const behind = await candidate('behind', { now: () => Date.now() - 3_600_000 });
  a.start();
  await until(() => a.role === 'leader');
  ahead.start();
  behind.start();
  await sleep(3 * TIMING.leaseDurationMs);
  expect([a.role, ahead.role, behind.role]).toEqual(['leader', 'standby', 'standby']);
  // The writes were A's alone.
  const writers = new Set(api.requests.filter((r) => r.method !== 'GET' && r.status < 300).map((r) => r.token));
  expect([...writers]).toEqual(['token-A']);
});
