import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_FILE, DEFAULT_BASE_URL, resolveConfig } from '../../src/engine/config.js';
import { removeDir, tempDir, writeFiles } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const fileConfig = [
  'sourceId: from-file',
  'prune: true',
  'pruneEntities: delete',
  'maxDeleteShare: 0.2',
  'maxDeleteCount: 12',
  'protect: ["entity/payments-*"]',
  'concurrency: 3',
  'requestsPerMinute: 300',
  '',
].join('\n');

describe('resolveConfig', () => {
  it('uses the defaults when there is no cortex-sync.yaml, no environment and no flag', async () => {
    const { config, diagnostics } = await resolveConfig({}, { GITHUB_REPOSITORY: 'acme/catalog' }, dir);
    expect(diagnostics).toEqual([]);
    const { origins, ...settings } = config;
    expect(Object.values(origins ?? {}).every((o) => o.origin === 'default')).toBe(true);
    expect(settings).toEqual({
      dir,
      sourceId: 'github.com/acme/catalog',
      baseUrl: DEFAULT_BASE_URL,
      prune: false,
      pruneEntities: 'archive',
      entityWrites: 'replace',
      forceConflicts: false,
      allowMassDelete: false,
      allowTakeover: false,
      maxDeleteShare: 0.25,
      protect: [],
      concurrency: 8,
      requestsPerMinute: 1000,
      forceEntityTypeSchema: false,
      requestTimeoutMs: 30_000,
      onDrift: 'heal',
      origin: 'github.com/acme/catalog',
    });
    expect(DEFAULT_BASE_URL).toBe('https://api.getcortexapp.com');
  });

  it('reads every setting of cortex-sync.yaml at the manifest root', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: fileConfig });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(diagnostics).toEqual([]);
    expect(config).toMatchObject({
      sourceId: 'from-file',
      baseUrl: DEFAULT_BASE_URL,
      prune: true,
      pruneEntities: 'delete',
      maxDeleteShare: 0.2,
      maxDeleteCount: 12,
      protect: ['entity/payments-*'],
      concurrency: 3,
      requestsPerMinute: 300,
      forceEntityTypeSchema: false,
    });
    expect(config.origins).toMatchObject({
      sourceId: { origin: 'file', name: `${CONFIG_FILE}:1` },
      prune: { origin: 'file', name: `${CONFIG_FILE}:2` },
      pruneEntities: { origin: 'file', name: `${CONFIG_FILE}:3` },
      maxDeleteShare: { origin: 'file', name: `${CONFIG_FILE}:4` },
      protect: { origin: 'file', name: `${CONFIG_FILE}:6` },
      concurrency: { origin: 'file', name: `${CONFIG_FILE}:7` },
    });
  });

  it('the environment beats the file', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: fileConfig });
    const env = {
      CORTEX_SYNC_SOURCE_ID: 'from-env',
      CORTEX_BASE_URL: 'https://env.example:2',
      CORTEX_SYNC_PRUNE: 'false',
      CORTEX_SYNC_CONCURRENCY: '5',
      CORTEX_RATE_LIMIT: '600',
      CORTEX_API_KEY: 'env-key',
    };
    const { config } = await resolveConfig({}, env, dir);
    expect(config).toMatchObject({
      sourceId: 'from-env',
      baseUrl: 'https://env.example:2',
      prune: false,
      concurrency: 5,
      requestsPerMinute: 600,
      apiKey: 'env-key',
    });
  });

  it('flags beat the environment and the file', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: fileConfig });
    const env = {
      CORTEX_SYNC_SOURCE_ID: 'from-env',
      CORTEX_BASE_URL: 'https://env.example:2',
      CORTEX_SYNC_PRUNE: 'false',
      CORTEX_SYNC_CONCURRENCY: '5',
      CORTEX_RATE_LIMIT: '600',
    };
    const { config } = await resolveConfig(
      {
        sourceId: 'from-flag',
        baseUrl: 'https://flag.example:3',
        prune: true,
        concurrency: 2,
        requestsPerMinute: 60,
        allowMassDelete: true,
        allowTakeover: true,
      },
      env,
      dir,
    );
    expect(config).toMatchObject({
      sourceId: 'from-flag',
      baseUrl: 'https://flag.example:3',
      prune: true,
      concurrency: 2,
      requestsPerMinute: 60,
      allowMassDelete: true,
      allowTakeover: true,
    });
  });

  it('CORTEX_SYNC_PRUNE=true turns prune on over a file that leaves it off', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'prune: false\n' });
    const on = await resolveConfig({}, { CORTEX_SYNC_PRUNE: 'true' }, dir);
    expect(on.config.prune).toBe(true);
    const unset = await resolveConfig({}, {}, dir);
    expect(unset.config.prune).toBe(false);
  });

  it('reads the file from --dir (or CORTEX_SYNC_DIR), resolved against the working directory', async () => {
    await writeFiles(dir, { [`manifests/${CONFIG_FILE}`]: 'sourceId: in-subdir\n' });
    const byFlag = await resolveConfig({ dir: 'manifests' }, {}, dir);
    expect(byFlag.config.dir).toBe(join(dir, 'manifests'));
    expect(byFlag.config.sourceId).toBe('in-subdir');
    const byEnv = await resolveConfig({}, { CORTEX_SYNC_DIR: 'manifests' }, dir);
    expect(byEnv.config.sourceId).toBe('in-subdir');
  });

  it('an unknown key is an error naming cortex-sync.yaml and its line', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: ok\nprune: true\npruneEnities: delete\n' });
    const { diagnostics, config } = await resolveConfig({}, {}, dir);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ file: CONFIG_FILE, line: 3 });
    expect(errors[0]?.message).toContain('pruneEnities');
    // A broken file contributes nothing: prune stays at its safe default.
    expect(config.prune).toBe(false);
  });

  it('a bad value is an error naming the file and the line of the value', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: ok\n\nmaxDeleteShare: 3\nconcurrency: many\n' });
    const { diagnostics } = await resolveConfig({}, {}, dir);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.file, d.line, d.field])).toEqual([
      [CONFIG_FILE, 3, 'maxDeleteShare'],
      [CONFIG_FILE, 4, 'concurrency'],
    ]);
  });

  it('broken YAML is an error naming the file and line', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: ok\nprune: [true\n' });
    const { diagnostics } = await resolveConfig({}, {}, dir);
    const error = diagnostics.find((d) => d.severity === 'error');
    expect(error).toMatchObject({ file: CONFIG_FILE });
    expect(error?.line).toBeGreaterThanOrEqual(2);
  });

  it('an empty cortex-sync.yaml is the same as none', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: '# nothing configured yet\n' });
    const { diagnostics, config } = await resolveConfig({}, { CORTEX_SYNC_SOURCE_ID: 'x' }, dir);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(config.concurrency).toBe(8);
  });

  it.each([
    ['CORTEX_SYNC_CONCURRENCY', 'lots'],
    ['CORTEX_SYNC_CONCURRENCY', '0'],
    ['CORTEX_SYNC_CONCURRENCY', '2.5'],
    ['CORTEX_SYNC_CONCURRENCY', '65'],
    ['CORTEX_RATE_LIMIT', '-1'],
    ['CORTEX_SYNC_PRUNE', 'yes'],
    ['CORTEX_SYNC_PRUNE', '1'],
    ['CORTEX_SYNC_TIMEOUT', '0'],
    ['CORTEX_SYNC_TIMEOUT', '5m'],
  ])('a bad %s=%j is an error naming the variable, not a silent default', async (name, value) => {
    await writeFiles(dir, { [CONFIG_FILE]: 'concurrency: 4\n' });
    const { diagnostics } = await resolveConfig({}, { [name]: value }, dir);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain(name);
    expect(errors[0]?.message).toContain(`'${value}'`);
  });

  it('the request timeout (a hung server) comes from CORTEX_SYNC_TIMEOUT, then requestTimeoutSeconds, else 30 s', async () => {
    expect((await resolveConfig({}, {}, dir)).config.requestTimeoutMs).toBe(30_000);
    await writeFiles(dir, { [CONFIG_FILE]: 'requestTimeoutSeconds: 90\n' });
    expect((await resolveConfig({}, {}, dir)).config.requestTimeoutMs).toBe(90_000);
    expect((await resolveConfig({}, { CORTEX_SYNC_TIMEOUT: '5' }, dir)).config.requestTimeoutMs).toBe(5_000);
  });

  it('an empty environment variable counts as unset', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'concurrency: 4\nprune: true\n' });
    const { config, diagnostics } = await resolveConfig(
      {},
      { CORTEX_SYNC_CONCURRENCY: '', CORTEX_RATE_LIMIT: ' ', CORTEX_SYNC_PRUNE: '' },
      dir,
    );
    expect(diagnostics).toEqual([]);
    expect(config).toMatchObject({ concurrency: 4, requestsPerMinute: 1000, prune: true });
  });
});

describe('where the API key may go', () => {
  it('a baseUrl in cortex-sync.yaml is an error naming the file and line, and the URL is not used', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: x\nbaseUrl: http://127.0.0.1:9\n' });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(diagnostics).toMatchObject([{ severity: 'error', file: CONFIG_FILE, line: 2, field: 'baseUrl' }]);
    expect(diagnostics[0]?.message).toMatch(/--base-url or CORTEX_BASE_URL/);
    expect(config.baseUrl).toBe(DEFAULT_BASE_URL);
  });

  it.each([
    ['http://api.example.com', /plain http/],
    ['http://10.0.0.5:8080', /plain http/],
    ['ftp://api.example.com', /scheme ftp/],
    ['https://user:pw@api.example.com', /credentials/],
    ['not a url', /not a valid URL/],
    ['https://api.example.com/?token=x', /query string or a fragment/],
    ['https://api.example.com/#x', /query string or a fragment/],
    ['https://api.example.com/api/v1/', /ends in \/api\/v1.*use https:\/\/api\.example\.com$/],
  ])('refuses the base URL %s from the flag or the environment', async (url, why) => {
    for (const [flags, env, origin] of [
      [{ baseUrl: url }, {}, '--base-url'],
      [{}, { CORTEX_BASE_URL: url }, 'CORTEX_BASE_URL'],
    ] as const) {
      const { diagnostics } = await resolveConfig(flags, env, dir);
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]?.message).toMatch(why);
      expect(diagnostics[0]?.message.startsWith(origin)).toBe(true);
    }
  });

  it('names the Action input, not a flag of the command line, when the Action said the base URL', async () => {
    const { diagnostics } = await resolveConfig({ baseUrl: 'ftp://api.example.com', from: 'input' }, {}, dir);
    expect(diagnostics.map((d) => d.message)).toEqual(['input `base-url`: expected an https URL, got the scheme ftp']);
  });

  it.each(['http://127.0.0.1:4010', 'http://localhost:4010/', 'http://[::1]:4010', 'https://cortex.internal.example'])(
    'accepts %s',
    async (url) => {
      const { diagnostics, config } = await resolveConfig({}, { CORTEX_BASE_URL: url }, dir);
      expect(diagnostics).toEqual([]);
      expect(config.baseUrl).toBe(url);
    },
  );
});
