import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, CortexSyncError } from '../../src/core/errors.js';
import type { PlanLogEntry } from '../../src/core/model.js';
import { openPlanLog } from '../../src/engine/plan-log.js';
import { removeDir, tempDir } from './helpers.js';

const entry = (id: string): PlanLogEntry => ({
  ts: '2025-01-01T00:00:00.000Z',
  kind: 'entity',
  id,
  action: 'create',
  method: 'POST',
  path: '/api/v1/open-api',
  status: 200,
  attempts: 1,
  durationMs: 12,
  outcome: 'ok',
});

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

describe('openPlanLog', () => {
  it('writes one JSON object per line, creating the folders, and appends on the next run', async () => {
    const file = join(dir, 'logs', 'deep', 'plan.jsonl');
    const first = openPlanLog(file);
    first.write(entry('a'));
    first.write(entry('b'));
    await first.close();
    const second = openPlanLog(file);
    second.write(entry('c'));
    await second.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as PlanLogEntry).id)).toEqual(['a', 'b', 'c']);
  });

  it('a path that cannot be written fails at once as a configuration error naming it', async () => {
    const asDirectory = join(dir, 'is-a-directory');
    await mkdir(asDirectory);
    expect(() => openPlanLog(asDirectory)).toThrow(ConfigError);
    expect(() => openPlanLog(asDirectory)).toThrow(/cannot open the plan log .*is-a-directory/);
  });

  it.skipIf(!existsSync('/dev/full'))(
    'a log that fills the disk fails on close naming the file and what it means, as an error of the run',
    async () => {
      const log = openPlanLog('/dev/full');
      log.write(entry('a'));
      const closed = log.close();
      await expect(closed).rejects.toThrow(CortexSyncError);
      await expect(closed).rejects.toThrow(
        /^could not write the plan log \/dev\/full \(ENOSPC: no space left on device, write\): the requests of this run were sent, but its log of them is incomplete$/,
      );
    },
  );
});
