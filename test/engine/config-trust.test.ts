/**
 * `cortex-sync.yaml` proposes, the operator decides: what the file may set, what a flag or a
 * variable set to `false` overrides, where each setting came from, and how the file is read (only
 * as a regular file inside the manifest root, never quoting a file that is not its YAML).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_FILE, type ConfigFlags, resolveConfig } from '../../src/engine/config.js';
import { removeDir, tempDir, writeFiles } from './helpers.js';

const SECRET = 'ghp_0123456789abcdefSECRETtoken';

let dir: string;
let outside: string;
beforeEach(async () => {
  dir = await tempDir();
  outside = await tempDir('cortex-sync-outside-');
});
afterEach(async () => {
  await removeDir(dir);
  await removeDir(outside);
});

const errorsOf = <D extends { severity: string }>(diagnostics: readonly D[]): D[] =>
  diagnostics.filter((d) => d.severity === 'error');

describe('what the file may decide', () => {
  it('forceEntityTypeSchema in cortex-sync.yaml is an error naming the line and why, and is not applied', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: x\nforceEntityTypeSchema: true\n' });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(errorsOf(diagnostics)).toMatchObject([
      { code: 'config', file: CONFIG_FILE, line: 2, field: 'forceEntityTypeSchema' },
    ]);
    expect(diagnostics[0]?.message).toMatch(/--force-entity-type-schema or CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA/);
    expect(config.forceEntityTypeSchema).toBe(false);
  });

  it('forceEntityTypeSchema comes from the flag or CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA, and says so', async () => {
    const byEnv = await resolveConfig({}, { CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA: 'true' }, dir);
    expect(byEnv.config.forceEntityTypeSchema).toBe(true);
    expect(byEnv.config.origins?.forceEntityTypeSchema).toEqual({
      origin: 'environment',
      name: 'CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA',
    });
    const byFlag = await resolveConfig(
      { forceEntityTypeSchema: false },
      { CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA: 'true' },
      dir,
    );
    expect(byFlag.config.forceEntityTypeSchema).toBe(false);
  });

  it('a maxDeleteShare above the default in the file is a warning and the default applies; the operator may raise it', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: x\nmaxDeleteShare: 1\n' });
    const fromFile = await resolveConfig({}, {}, dir);
    expect(fromFile.config.maxDeleteShare).toBe(0.25);
    expect(fromFile.diagnostics).toMatchObject([
      { severity: 'warning', file: CONFIG_FILE, line: 2, field: 'maxDeleteShare' },
    ]);
    expect(fromFile.diagnostics[0]?.message).toMatch(/may only lower it/);
    const byOperator = await resolveConfig({}, { CORTEX_SYNC_MAX_DELETE_SHARE: '0.6' }, dir);
    expect(byOperator.config.maxDeleteShare).toBe(0.6);
    expect(byOperator.config.origins?.maxDeleteShare.origin).toBe('environment');
  });

  it('the file may lower the mass-delete guard', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'maxDeleteShare: 0.1\nmaxDeleteCount: 3\n' });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(diagnostics).toEqual([]);
    expect(config).toMatchObject({ maxDeleteShare: 0.1, maxDeleteCount: 3 });
  });

  it('protect patterns add up: the file adds to the operator’s, never removes them', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'protect: ["entity/a-*"]\n' });
    const { config } = await resolveConfig(
      { protect: ['initiative/*'] },
      { CORTEX_SYNC_PROTECT: ' entity/core , ,entity/a-*' },
      dir,
    );
    expect(config.protect).toEqual(['initiative/*', 'entity/core', 'entity/a-*']);
    expect(config.origins?.protect).toEqual({
      origin: 'flag',
      name: `--protect + CORTEX_SYNC_PROTECT + ${CONFIG_FILE}:1`,
    });
  });
});

describe('a flag or a variable that is set, false included, beats the file', () => {
  const file = [
    'sourceId: from-file',
    'prune: true',
    'pruneEntities: delete',
    'maxDeleteShare: 0.2',
    'maxDeleteCount: 50',
    'concurrency: 3',
    'requestsPerMinute: 300',
    'leaseWaitSeconds: 300',
    'requestTimeoutSeconds: 90',
    '',
  ].join('\n');

  it.each<[string, ConfigFlags, NodeJS.ProcessEnv, Record<string, unknown>, string]>([
    ['prune: --no-prune', { prune: false }, {}, { prune: false }, '--no-prune'],
    ['prune: CORTEX_SYNC_PRUNE=false', {}, { CORTEX_SYNC_PRUNE: 'false' }, { prune: false }, 'CORTEX_SYNC_PRUNE'],
    [
      'pruneEntities: CORTEX_SYNC_PRUNE_ENTITIES=archive',
      {},
      { CORTEX_SYNC_PRUNE_ENTITIES: 'archive' },
      { pruneEntities: 'archive' },
      'CORTEX_SYNC_PRUNE_ENTITIES',
    ],
    ['pruneEntities: input', { pruneEntities: 'archive' }, {}, { pruneEntities: 'archive' }, '--prune-entities'],
    [
      'maxDeleteShare: CORTEX_SYNC_MAX_DELETE_SHARE=0',
      {},
      { CORTEX_SYNC_MAX_DELETE_SHARE: '0' },
      { maxDeleteShare: 0 },
      'CORTEX_SYNC_MAX_DELETE_SHARE',
    ],
    [
      'maxDeleteCount: CORTEX_SYNC_MAX_DELETE_COUNT=0',
      {},
      { CORTEX_SYNC_MAX_DELETE_COUNT: '0' },
      { maxDeleteCount: 0 },
      'CORTEX_SYNC_MAX_DELETE_COUNT',
    ],
    ['sourceId', {}, { CORTEX_SYNC_SOURCE_ID: ' from-env ' }, { sourceId: 'from-env' }, 'CORTEX_SYNC_SOURCE_ID'],
    ['concurrency', {}, { CORTEX_SYNC_CONCURRENCY: '1' }, { concurrency: 1 }, 'CORTEX_SYNC_CONCURRENCY'],
    ['requestsPerMinute', {}, { CORTEX_RATE_LIMIT: '60' }, { requestsPerMinute: 60 }, 'CORTEX_RATE_LIMIT'],
    ['leaseWait: 0', {}, { CORTEX_SYNC_LEASE_WAIT: '0' }, { leaseWaitMs: 0 }, 'CORTEX_SYNC_LEASE_WAIT'],
    ['requestTimeout', {}, { CORTEX_SYNC_TIMEOUT: '5' }, { requestTimeoutMs: 5000 }, 'CORTEX_SYNC_TIMEOUT'],
  ])('%s', async (_, flags, env, expected, name) => {
    await writeFiles(dir, { [CONFIG_FILE]: file });
    const { config, diagnostics } = await resolveConfig(flags, env, dir);
    expect(diagnostics).toEqual([]);
    expect(config).toMatchObject(expected);
    const setting = Object.keys(expected)[0] as keyof NonNullable<typeof config.origins>;
    expect(config.origins?.[setting].name).toBe(name);
  });

  it.each([
    ['CORTEX_SYNC_PRUNE_ENTITIES', 'remove'],
    ['CORTEX_SYNC_MAX_DELETE_SHARE', '25%'],
    ['CORTEX_SYNC_MAX_DELETE_COUNT', '-1'],
    ['CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA', 'yes'],
  ])('a bad %s=%j is an error naming the variable', async (name, value) => {
    const { diagnostics } = await resolveConfig({}, { [name]: value }, dir);
    expect(errorsOf(diagnostics)).toHaveLength(1);
    expect(diagnostics[0]?.message).toContain(name);
  });
});

describe('cortex-sync.yaml is read only as a regular file inside the manifest root', () => {
  /** Every message of a run, joined: nothing of the secret may be in it. */
  const messages = (diagnostics: readonly { message: string }[]) => diagnostics.map((d) => d.message).join('\n');

  it('a symlink to a token file outside the root is an error quoting nothing of it', async () => {
    await writeFile(join(outside, 'token'), `token: ${SECRET}\n`);
    await symlink(join(outside, 'token'), join(dir, CONFIG_FILE));
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(errorsOf(diagnostics)).toMatchObject([{ file: CONFIG_FILE, line: 1 }]);
    expect(messages(diagnostics)).toMatch(/symlink that points outside the manifest directory/);
    expect(messages(diagnostics)).not.toContain('token');
    expect(config.prune).toBe(false);
  });

  it('a symlink to /proc/self/environ is an error that shows no variable', async () => {
    await symlink('/proc/self/environ', join(dir, CONFIG_FILE));
    const { diagnostics } = await resolveConfig({}, { CORTEX_API_KEY: SECRET, OTHER: 'x' }, dir);
    expect(errorsOf(diagnostics)).toHaveLength(1);
    expect(messages(diagnostics)).not.toMatch(/CORTEX|PATH|HOME|=/);
  });

  it('a FIFO is refused at once (the read does not hang)', async () => {
    execFileSync('mkfifo', [join(dir, CONFIG_FILE)]);
    const started = Date.now();
    const { diagnostics } = await resolveConfig({}, {}, dir);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(messages(errorsOf(diagnostics))).toMatch(/FIFO/);
  });

  it('a directory named cortex-sync.yaml is an error, not an empty configuration', async () => {
    await mkdir(join(dir, CONFIG_FILE));
    const { diagnostics } = await resolveConfig({}, {}, dir);
    expect(messages(errorsOf(diagnostics))).toMatch(/directory/);
  });

  it('a symlink to another file inside the root is read', async () => {
    await writeFiles(dir, { 'settings/shared.yaml': 'sourceId: shared\n' });
    await symlink(join(dir, 'settings/shared.yaml'), join(dir, CONFIG_FILE));
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(diagnostics).toEqual([]);
    expect(config.sourceId).toBe('shared');
  });

  it('a file that is not a mapping (a pasted .env, a binary) is refused without quoting it', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: `CORTEX_API_KEY=${SECRET}\n` });
    const text = await resolveConfig({}, {}, dir);
    expect(errorsOf(text.diagnostics)).toMatchObject([{ file: CONFIG_FILE, line: 1 }]);
    expect(messages(text.diagnostics)).toMatch(/must be a mapping of settings/);
    expect(messages(text.diagnostics)).not.toContain('CORTEX_API_KEY');
    await writeFile(join(dir, CONFIG_FILE), Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]));
    const binary = await resolveConfig({}, {}, dir);
    expect(messages(binary.diagnostics)).toMatch(/not valid UTF-8/);
  });

  it('several YAML documents are an error naming the second one', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'prune: false\n---\nprune: true\n' });
    const { diagnostics } = await resolveConfig({}, {}, dir);
    expect(errorsOf(diagnostics)).toMatchObject([{ file: CONFIG_FILE, line: 3 }]);
  });
});

describe('CORTEX_API_KEY_FILE', () => {
  const keyFile = async (text: string | Buffer, name = 'key'): Promise<string> => {
    const path = join(outside, name);
    await writeFile(path, text);
    return path;
  };

  it('reads the key from a file outside the manifest root, trailing newline (or CRLF) dropped', async () => {
    for (const text of [`${SECRET}\n`, `${SECRET}\r\n`, `  ${SECRET}`]) {
      const { config, diagnostics } = await resolveConfig({}, { CORTEX_API_KEY_FILE: await keyFile(text) }, dir);
      expect(diagnostics).toEqual([]);
      expect(config.apiKey).toBe(SECRET);
      expect(config.origins?.apiKey).toEqual({ origin: 'environment', name: 'CORTEX_API_KEY_FILE' });
    }
  });

  it('follows a symlink outside the root (a mounted Kubernetes secret is one)', async () => {
    await mkdir(join(outside, '..data'));
    await writeFile(join(outside, '..data/api-key'), `${SECRET}\n`);
    await symlink(join(outside, '..data/api-key'), join(outside, 'api-key'));
    const { config } = await resolveConfig({}, { CORTEX_API_KEY_FILE: join(outside, 'api-key') }, dir);
    expect(config.apiKey).toBe(SECRET);
  });

  it('a relative path is relative to the working directory', async () => {
    await keyFile(`${SECRET}\n`);
    const { config } = await resolveConfig({ dir }, { CORTEX_API_KEY_FILE: 'key' }, outside);
    expect(config.apiKey).toBe(SECRET);
  });

  it.each<[string, (path: string) => Promise<string>, RegExp]>([
    ['an empty file', async () => keyFile('\n'), /is empty/],
    ['a file of two lines', async () => keyFile(`${SECRET}\nsecond-line\n`), /more than one line/],
    ['a missing file', async () => join(outside, 'nothing-here'), /does not exist/],
    ['a directory', async () => outside, /directory/],
    [
      'a FIFO (no hang)',
      async () => {
        execFileSync('mkfifo', [join(outside, 'fifo')]);
        return join(outside, 'fifo');
      },
      /FIFO/,
    ],
    ['a huge file', async () => keyFile(Buffer.alloc(100 * 1024, 'a')), /larger than 64 KiB/],
    ['binary', async () => keyFile(Buffer.from([0xff, 0xfe, 0xfd])), /not UTF-8/],
  ])('%s is an error naming the variable, quoting nothing of it', async (_, make, why) => {
    const path = await make('');
    const { config, diagnostics } = await resolveConfig({}, { CORTEX_API_KEY_FILE: path }, dir);
    expect(config.apiKey).toBeUndefined();
    expect(errorsOf(diagnostics)).toHaveLength(1);
    expect(diagnostics[0]?.message).toMatch(/^CORTEX_API_KEY_FILE/);
    expect(diagnostics[0]?.message).toMatch(why);
    expect(diagnostics[0]?.message).not.toContain(SECRET);
    expect(diagnostics[0]?.message).not.toContain('second-line');
  });

  it('a key file inside the manifest root (or a symlink there to one outside) is refused', async () => {
    await writeFiles(dir, { 'keys/api-key': `${SECRET}\n` });
    const inside = await resolveConfig({}, { CORTEX_API_KEY_FILE: join(dir, 'keys/api-key') }, dir);
    expect(inside.config.apiKey).toBeUndefined();
    expect(inside.diagnostics[0]?.message).toMatch(/inside the manifest directory/);
    await symlink(await keyFile(`${SECRET}\n`), join(dir, 'link'));
    const linked = await resolveConfig({}, { CORTEX_API_KEY_FILE: join(dir, 'link') }, dir);
    expect(linked.config.apiKey).toBeUndefined();
    expect(linked.diagnostics[0]?.message).toMatch(/inside the manifest directory/);
    // And a symlink outside the root that points into it.
    await symlink(join(dir, 'keys/api-key'), join(outside, 'back-in'));
    const back = await resolveConfig({}, { CORTEX_API_KEY_FILE: join(outside, 'back-in') }, dir);
    expect(back.config.apiKey).toBeUndefined();
  });

  it('CORTEX_API_KEY and CORTEX_API_KEY_FILE both set is an error (no silent choice between two keys)', async () => {
    const { config, diagnostics } = await resolveConfig(
      {},
      { CORTEX_API_KEY: 'another-key-0123456789', CORTEX_API_KEY_FILE: await keyFile(SECRET) },
      dir,
    );
    expect(config.apiKey).toBeUndefined();
    expect(diagnostics[0]?.message).toMatch(/both CORTEX_API_KEY and CORTEX_API_KEY_FILE are set/);
  });

  it('CORTEX_API_KEY is trimmed, and one with a line break inside is refused', async () => {
    expect((await resolveConfig({}, { CORTEX_API_KEY: ` ${SECRET}\n` }, dir)).config.apiKey).toBe(SECRET);
    const broken = await resolveConfig({}, { CORTEX_API_KEY: `${SECRET}\nX-Other: 1` }, dir);
    expect(broken.config.apiKey).toBeUndefined();
    expect(broken.diagnostics[0]?.message).toMatch(/^CORTEX_API_KEY holds whitespace/);
    expect(broken.diagnostics[0]?.message).not.toContain(SECRET);
  });
});
