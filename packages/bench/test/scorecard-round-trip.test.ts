/**
 * The benchmark's scorecard round trip at a small N: N scorecards and N Initiatives naming them
 * apply, plan again with no change, export to 2N manifests and plan with no change, with the
 * requests of each step counted per route.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  renderScorecardRoundTrip,
  routeOf,
  runScorecardRoundTrip,
  scorecardRepositoryFiles,
} from '../src/scorecard-round-trip.js';
import { type RunningEmulator, startEmulator } from '../../emulator/src/server.js';

let emulator: RunningEmulator | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await emulator?.stop();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

it('applies, replans, exports and replans N scorecards and N Initiatives, counting requests per step and route', async () => {
  emulator = await startEmulator({ apiKey: 'bench-test-key', rateLimitPerMinute: 0 });
  emulator.state.scorecards.items = []; // an empty workspace: only what the round trip writes
  const workDir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-scorecards-'));
  dirs.push(workDir);
  const emu = emulator;
  const n = 4;
  const result = await runScorecardRoundTrip({
    n,
    workDir,
    emulator: { url: emu.url, requests: async () => emu.requests },
    apiKey: 'bench-test-key',
    requestsPerMinute: 100_000,
  });
  expect(result.problems).toEqual([]);
  expect(result.steps.map((s) => [s.label, s.exitCode, s.changes ?? s.files])).toEqual([
    ['apply', 0, 2 * n],
    ['plan again', 0, 0],
    ['export', 0, 2 * n],
    ['plan of the export', 0, 0],
  ]);
  const [apply, again, exported] = result.steps;
  // Every scorecard written once, every Initiative created once.
  expect(apply?.byRoute['POST /api/v1/scorecards/descriptor']).toBe(n);
  expect(apply?.byRoute['POST /api/v1/initiatives']).toBe(n);
  // A plan reads the list and the descriptor of each scorecard it manages: no write.
  expect(again?.byRoute['GET /api/v1/scorecards/{tag}/descriptor']).toBe(n);
  expect(Object.keys(again?.byRoute ?? {}).every((route) => route.startsWith('GET '))).toBe(true);
  expect(exported?.byRoute['GET /api/v1/scorecards/{tag}/descriptor']).toBe(n);
  expect(again?.requests).toBe(Object.values(again?.byRoute ?? {}).reduce((a, b) => a + b, 0));
  expect(emu.state.scorecards.items).toHaveLength(n);
  expect(emu.state.initiatives.items).toHaveLength(n);
  expect(renderScorecardRoundTrip(result)).toContain('The round trip held.');
});

it('names the routes by what they do, ids folded', () => {
  expect(routeOf({ method: 'GET', path: '/api/v1/scorecards/bench-scorecard-3/descriptor' })).toBe(
    'GET /api/v1/scorecards/{tag}/descriptor',
  );
  expect(routeOf({ method: 'POST', path: '/api/v1/scorecards/descriptor' })).toBe('POST /api/v1/scorecards/descriptor');
  expect(routeOf({ method: 'PUT', path: '/api/v1/initiatives/in0123456789abcdef' })).toBe(
    'PUT /api/v1/initiatives/{cid}',
  );
  expect(scorecardRepositoryFiles(2).size).toBe(5);
});
