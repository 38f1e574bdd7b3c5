/**
 * A key within the did-you-mean distance of a key the kind knows is an error (`unknown-key`, with
 * the key it likely means, at file:line): `validate` fails and `apply` writes nothing. Other
 * unknown `x-cortex-*` keys of an entity stay warnings (the API drops them).
 */
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

const env = { CORTEX_SYNC_SOURCE_ID: 'key-typos', NO_COLOR: '1' };
const writes = (from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

const queue = (typo: string): string =>
  `openapi: 3.0.1\ninfo:\n  title: orders\n  x-cortex-tag: orders\n  ${typo}: queue\n`;

describe('a typo of a known key', () => {
  it('`x-cortex-typ` fails validate at file:line naming `x-cortex-type`, and apply writes nothing', async () => {
    await writeFiles(dir, { 'cortex.yaml': queue('x-cortex-typ') });
    const validate = await cli(['validate'], { cwd: dir, env });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain(
      'cortex.yaml:5:3: error: info.x-cortex-typ: unknown key `x-cortex-typ`; did you mean `x-cortex-type`?',
    );
    expect(validate.stderr).not.toContain('warning: info.x-cortex-typ');

    const before = emulator.requests.length;
    const apply = await cli(['apply', '--auto-approve'], { cwd: dir, emulator, env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('did you mean `x-cortex-type`?');
    expect(writes(before)).toEqual([]);
  });

  it('an owner typo inside `x-cortex-owners` names the field it likely means', async () => {
    await writeFiles(dir, {
      'cortex.yaml': serviceYaml('payments', '  x-cortex-owners:\n    - type: email\n      emial: a@example.com\n'),
    });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'cortex.yaml:8:7: error: info.x-cortex-owners[0].emial: unknown key `emial`; did you mean `email`?',
    );
  });

  it('a misspelt `x-cortex-owners` is an error, not a dropped owner', async () => {
    await writeFiles(dir, {
      'cortex.yaml': serviceYaml('payments', '  x-cortex-onwers:\n    - {type: email, email: a@example.com}\n'),
    });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('did you mean `x-cortex-owners`?');
  });

  it('`isdraft` in a catalog page: did you mean `isDraft`', async () => {
    await writeFiles(dir, { '.cortex/catalog-pages/tier-one.yaml': 'slug: tier-one\nname: Tier 1\nisdraft: false\n' });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      '.cortex/catalog-pages/tier-one.yaml:3:1: error: isdraft: unknown key `isdraft`; did you mean `isDraft`?',
    );
  });

  it('a key valid in another kind is judged by this kind: `isDraft` in a scorecard means its `draft`', async () => {
    await writeFiles(dir, {
      '.cortex/scorecards/ready.yaml': [
        'tag: ready',
        'name: Ready',
        'isDraft: true',
        'rules:',
        '  - title: Has owners',
        '    expression: ownership != null',
        '',
      ].join('\n'),
    });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('isDraft: unknown key `isDraft`; did you mean `draft`?');
  });

  it('a unicode look-alike (Cyrillic р in x-cortex-tyрe) is a typo too', async () => {
    await writeFiles(dir, { 'cortex.yaml': queue('x-cortex-ty\u0440e') });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('did you mean `x-cortex-type`?');
  });

  it('distance 2 is a typo; distance 3 stays a warning (the API drops the key)', async () => {
    await writeFiles(dir, { 'cortex.yaml': queue('x-cortex-tpey') });
    const two = await cli(['validate'], { cwd: dir, env });
    expect(two.code).toBe(1);
    expect(two.stderr).toContain('did you mean `x-cortex-type`?');

    await writeFiles(dir, { 'cortex.yaml': queue('x-cortex-tzzz') });
    const three = await cli(['validate'], { cwd: dir, env });
    expect(three.code).toBe(0);
    expect(three.stderr).toContain('warning: info.x-cortex-tzzz: unknown Cortex key; the API silently drops it');
  });

  it('`x-cortex-links` (named by the vendor OpenAPI) is not taken for a typo of `x-cortex-link`', async () => {
    await writeFiles(dir, {
      'cortex.yaml': serviceYaml('payments', '  x-cortex-links:\n    - {name: Logs, type: logs}\n'),
    });
    const run = await cli(['validate'], { cwd: dir, env });
    expect(run.code).toBe(0);
  });
});
