/**
 * The Action's engine context is built like every other runtime's (`openEngineContext`): the API
 * client reports to the Action's event sink, so a Retry-After pause reaches the job log.
 */
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { realEngine } from '../../src/action/engine.js';
import { logEngineEvents } from '../../src/action/runtime.js';
import type { EngineEvent } from '../../src/engine/context.js';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { pullRequestPayload, recordingRuntime, runInProcess } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
  await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

it("a Retry-After pause of the API client is an event of the Action's run, and a line of its log", async () => {
  emulator.setFaults({ every429: 8, retryAfterSeconds: 1 });
  const events: EngineEvent[] = [];
  const log = recordingRuntime({});
  const sink = logEngineEvents(log);
  const run = await runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', comment: 'false' },
    wrapEngine: () =>
      realEngine(new AbortController().signal, {
        emit: (e) => {
          events.push(e);
          sink.emit(e);
        },
      }),
  });
  expect(run.code).toBe(0);
  expect(events.some((e) => e.type === 'request')).toBe(true);
  expect(events.some((e) => e.type === 'ratelimit.paused')).toBe(true);
  expect(log.log).toContainEqual(expect.stringMatching(/^rate limited: pausing 1 s$/));
}, 30_000);
