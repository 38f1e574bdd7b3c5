/**
 * A repository's `cortex-sync.yaml` may name a source id that reads as another source's (`Repo-B`,
 * or `rеpo-b` with a Cyrillic `е`): the plan would be headed with a name a reviewer takes for that
 * source. Such a new source id is warned about, with the characters that differ shown as code
 * points, and the run still manages and removes nothing of the recorded source.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/server.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

let emulator: RunningEmulator;
const dirs: string[] = [];

beforeEach(async () => {
  emulator = await startTestEmulator();
});
afterEach(async () => {
  await emulator.stop();
  await Promise.all(dirs.splice(0).map(removeDir));
});

const checkout = async (remote: string, files: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { '.git/config': `[remote "origin"]\n\turl = ${remote}\n`, ...files });
  return dir;
};

const entityStatus = async (tag: string): Promise<number> =>
  (await fetch(`${emulator.url}/api/v1/catalog/${tag}`, { headers: { authorization: `Bearer ${API_KEY}` } })).status;

const applyRepoB = async () => {
  const b = await checkout('git@github.com:acme/repo-b.git', {
    'cortex-sync.yaml': 'sourceId: repo-b\n',
    'services/b-one/cortex.yaml': serviceYaml('b-one'),
  });
  const run = await cli(['apply'], { emulator, cwd: b });
  expect(run.code, run.stderr).toBe(0);
  return b;
};

const planAs = async (sourceId: string) => {
  const a = await checkout('https://github.com/acme/repo-a', {
    'cortex-sync.yaml': `sourceId: ${JSON.stringify(sourceId)}\nprune: true\n`,
    'services/a-one/cortex.yaml': serviceYaml('a-one'),
  });
  return cli(['plan', '--prune'], { emulator, cwd: a });
};

describe('a new source id that reads as a recorded one', () => {
  it('a Cyrillic look-alike is warned about with the differing letter shown as a code point, and touches nothing of the other source', async () => {
    await applyRepoB();
    const run = await planAs('r\u0435po-b');
    const out = run.stdout + run.stderr;
    expect(out).toContain('lookalike-source-id');
    expect(out).toContain(
      'source id `r\\u{435}po-b` is new to this workspace but reads as `repo-b` (Unicode look-alike or invisible characters), a source that already has an ownership record',
    );
    expect(out).not.toMatch(/b-one/);
    expect(await entityStatus('b-one')).toBe(200);
  });

  it('a case-only variant is warned about as such', async () => {
    await applyRepoB();
    const out = await planAs('Repo-B').then((r) => r.stdout + r.stderr);
    expect(out).toContain('source id `Repo-B` is new to this workspace but differs only in case from `repo-b`');
  });

  it('no warning for an unrelated new source id, nor for the recorded source planning again', async () => {
    const b = await applyRepoB();
    expect((await planAs('repo-a')).stdout).not.toContain('lookalike-source-id');
    const again = await cli(['plan'], { emulator, cwd: b });
    expect(again.stdout + again.stderr).not.toContain('lookalike-source-id');
  });
});
