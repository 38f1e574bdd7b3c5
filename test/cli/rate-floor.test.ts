/**
 * `cortex-sync.yaml` is the repository's (a pull request writes it): it may lower the client's
 * request rate only down to a floor, never slow every read to a crawl. Below the floor is an error
 * naming the file, the line and the floor; the operator's `CORTEX_RATE_LIMIT` may still go lower.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());
beforeEach(async () => {
  dir = await tempDir();
  await writeFiles(dir, { '.cortex/catalog/svc.yaml': serviceYaml('svc') });
});
afterEach(() => removeDir(dir));

const withFile = (body: string) => writeFiles(dir, { 'cortex-sync.yaml': `sourceId: rate-floor\n${body}\n` });

describe('requestsPerMinute in cortex-sync.yaml', () => {
  it('under the floor: validate fails naming the file, the line and the floor', async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute.*at least 60/);
    expect(run.stderr).toContain('CORTEX_RATE_LIMIT');
  });

  it('under the floor: plan refuses before it reads anything', async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute.*at least 60/);
    expect(run.stdout).not.toContain('+ create');
  });

  it.each([
    ['0', 'requestsPerMinute: 0'],
    ['a negative number', 'requestsPerMinute: -5'],
    ['a fraction', 'requestsPerMinute: 59.5'],
    ['a string', "requestsPerMinute: '1'"],
  ])('%s is an error naming the line', async (_, body) => {
    await withFile(body);
    const run = await cli(['validate', '--dir', '.'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:2.*requestsPerMinute/);
  });

  it('at the floor, and a large value, are accepted', async () => {
    for (const value of ['60', '100000']) {
      await withFile(`requestsPerMinute: ${value}`);
      const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator });
      expect(run.stderr).not.toMatch(/requestsPerMinute/);
      expect(run.code).toBe(0);
    }
  });

  it("the operator's CORTEX_RATE_LIMIT may go under the floor; the file's value is then not used", async () => {
    await withFile('requestsPerMinute: 1');
    const run = await cli(['plan', '--dir', '.'], { cwd: dir, emulator, env: { CORTEX_RATE_LIMIT: '30' } });
    // The file is still wrong (the repository proposed a crawl): said, and refused.
    expect(run.code).toBe(1);
    await withFile('requestsPerMinute: 120');
    const low = await cli(['plan', '--dir', '.'], { cwd: dir, emulator, env: { CORTEX_RATE_LIMIT: '30' } });
    expect(low.stderr).not.toMatch(/requestsPerMinute/);
    expect(low.code).toBe(0);
  });
});
