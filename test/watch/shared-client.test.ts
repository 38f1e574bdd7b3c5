/**
 * The sources of one watcher share one API client per API address, at the process's rate and
 * concurrency: a repository whose `cortex-sync.yaml` raises `requestsPerMinute` does not get a
 * client of its own beside the shared one (its requests would count against the workspace's rate
 * without the fair budget knowing of them).
 */
import { afterEach, expect, it } from 'vitest';
import { configureRun } from '../../src/engine/config.js';
import { sharedClients } from '../../src/watch/shared-client.js';
import { API_KEY, removeDir, tempDir, writeFiles } from './harness.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeDir));
});

const configOf = async (file: string) => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { 'cortex-sync.yaml': file });
  const env = { CORTEX_API_KEY: API_KEY, CORTEX_BASE_URL: 'http://127.0.0.1:9' };
  return (await configureRun({ said: { dir } }, env, dir)).config;
};

const noEvents = { emit: () => {} };

it("gives every source the one client at the process's rate, whatever a repository's file says", async () => {
  const plain = await configOf('sourceId: a\n');
  const raised = await configOf('sourceId: b\nrequestsPerMinute: 60000\nconcurrency: 64\n');
  expect(raised.requestsPerMinute).toBe(60000);
  const shared = sharedClients(
    {},
    { CORTEX_RATE_LIMIT: '600' },
    { apiKey: API_KEY, userAgent: 'test', mayWrite: () => true },
  );
  try {
    const a = shared.clientFor('a')(plain, API_KEY, noEvents);
    const b = shared.clientFor('b')(raised, API_KEY, noEvents);
    expect(a.stats().currentPerMinute).toBe(600);
    expect(b.stats().currentPerMinute).toBe(600);
  } finally {
    await shared.close();
  }
  // Without the operator's setting, the default: still one rate for all.
  const byDefault = sharedClients({}, {}, { apiKey: API_KEY, userAgent: 'test', mayWrite: () => true });
  try {
    expect(byDefault.clientFor('b')(raised, API_KEY, noEvents).stats().currentPerMinute).toBe(1000);
  } finally {
    await byDefault.close();
  }
});
