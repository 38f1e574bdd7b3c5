/**
 * What a hostile or unlucky repository gets from `validate` and `plan`: a file name that is not
 * UTF-8 is named as such; nesting past the depth limit is a located error, not a stack overflow; a
 * tag over the length limit is refused at file:line and never printed in full; a source id that
 * differs from a recorded one only by punctuation at its ends is a look-alike; a tag renamed only
 * in letter case never removes the old spelling in the same run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

const env = { NO_COLOR: '1' };
const writes = (from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

describe('source minors', () => {
  it('a manifest whose file name is not UTF-8 is named as such, never as removed while being read', async () => {
    await writeFiles(dir, { '.cortex/catalog/ok.yaml': serviceYaml('ok-svc') });
    const name = Buffer.concat([
      Buffer.from(join(dir, '.cortex/catalog/caf')),
      Buffer.from([0xe9]),
      Buffer.from('.yaml'),
    ]);
    writeFileSync(name, serviceYaml('cafe-svc'));
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.cortex/catalog/caf\ufffd.yaml has a name that is not valid UTF-8');
    expect(run.stderr).not.toContain('removed while being read');
  });

  it.each([
    ['far too deep for the parser (5,000 levels)', 5000],
    ['just past the limit (101 levels)', 101],
  ])('nesting %s is a located error naming the limit', async (_, depth) => {
    const value = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('deep-svc', `  x-cortex-custom-metadata:\n    a: ${value}\n`) });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex\.yaml:7:\d+: error: mappings and lists are nested deeper than 100 levels here/);
    expect(run.stderr).not.toContain('call stack');
  });

  it('nesting within the limit is read', async () => {
    const value = `${'['.repeat(90)}${']'.repeat(90)}`;
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('deep-ok', `  x-cortex-custom-metadata:\n    a: ${value}\n`) });
    expect((await cli(['validate'], { cwd: dir, env })).code).toBe(0);
  });

  it('a 20,000-character tag is refused at file:line and never printed in full', async () => {
    const tag = `t${'a'.repeat(19_999)}`;
    await writeFiles(dir, { 'cortex.yaml': serviceYaml(tag) });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'cortex.yaml:4:3: error: info.x-cortex-tag: is 20,000 characters long, over the 256 a tag may have',
    );
    expect(run.stderr).not.toContain('a'.repeat(300));
    expect(run.stderr.length).toBeLessThan(2000);
  });

  it('a new source id that differs from a recorded one only by a trailing dot is a look-alike', async () => {
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('dot-svc') });
    const first = await cli(['apply', '--auto-approve'], {
      cwd: dir,
      emulator,
      env: { ...env, CORTEX_SYNC_SOURCE_ID: 'example-catalog' },
    });
    expect(first.code).toBe(0);
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('dot-svc-2') });
    const plan = await cli(['plan'], {
      cwd: dir,
      emulator,
      env: { ...env, CORTEX_SYNC_SOURCE_ID: 'example-catalog.' },
    });
    expect(plan.stderr).toContain(
      'source id `example-catalog.` is new to this workspace but differs only in punctuation or spaces at its ends from `example-catalog`',
    );
  });

  it('a tag renamed only in letter case: a warning, and the old spelling is kept out of the prune', async () => {
    const source = { ...env, CORTEX_SYNC_SOURCE_ID: 'case-rename' };
    await writeFiles(dir, { 'cortex.yaml': serviceYaml('case-svc') });
    expect((await cli(['apply', '--auto-approve'], { cwd: dir, emulator, env: source })).code).toBe(0);

    await writeFiles(dir, { 'cortex.yaml': serviceYaml('Case-Svc') });
    const plan = await cli(['plan', '--prune', '--output', 'json'], { cwd: dir, emulator, env: source });
    const planned = JSON.parse(plan.stdout) as { changes: { id: string; action: string }[] };
    expect(planned.changes.filter((c) => c.id === 'case-svc').map((c) => c.action)).toEqual([]);
    expect(plan.stderr).toContain(
      'warning: entity `case-svc` has no manifest, but `Case-Svc` (cortex.yaml:4) differs from it only in letter case',
    );

    const before = emulator.requests.length;
    const apply = await cli(['apply', '--prune', '--auto-approve'], { cwd: dir, emulator, env: source });
    expect(apply.code).toBe(0);
    const removals = writes(before).filter((r) => /case-svc/.test(r.path) && r.method !== 'POST');
    expect(removals).toEqual([]);
  });
});
