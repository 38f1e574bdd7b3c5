/**
 * What every end-to-end test of merge mode (`entityWrites: merge`, docs/adr-0004-co-ownership.md)
 * sets up the same way: one emulator for the file, the CLI run against it from a repository
 * directory, the API read and written as a UI or an integration would, and throwaway repositories
 * each holding `cortex-sync.yaml` and manifests under `.cortex/catalog/`.
 */
import { afterAll, beforeAll } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { claimKeyOf } from '../../src/kinds/entity/merge.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY, type CliRun, cli, removeDir, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

export interface ApiAnswer {
  status: number;
  /** The parsed body; `undefined` when it is empty. */
  json: unknown;
}

export interface CoOwnershipHarness {
  /** The file's emulator; usable in tests and hooks registered after the harness. */
  emulator: RunningEmulator;
  /** The environment pointing the CLI at the emulator (or `cliBaseUrl`) with its key. */
  env: () => NodeJS.ProcessEnv;
  /** `cortex-sync <args>` from `dir`. */
  run: (dir: string, args: string[]) => Promise<CliRun>;
  /** A request to the emulator's API, as the UI or an integration makes it (the body is OpenAPI YAML). */
  api: (method: string, path: string, body?: string) => Promise<ApiAnswer>;
  /** The live descriptor's `info` of an entity. */
  infoOf: (tag: string) => Promise<Record<string, unknown>>;
  /** Names `sources` on the entity by hand (their claim keys in its custom metadata), as anyone who can edit it may. */
  nameSources: (tag: string, sources: string[]) => Promise<ApiAnswer>;
  /**
   * Replaces the emulator's faults: the next `reads` answers of the record list leave these sources'
   * records out, and reading a `reject`ed source's record by its tag fails with a 500 and `message`.
   */
  leaveRecordsOut: (sources: string[], reads?: number, reject?: { source: string; message: string }[]) => void;
  /** A merge-mode repository of `source` (none: no `sourceId` at all) with one manifest: `info` lines after the tag. */
  repo: (source: string | undefined, tag: string, info: string) => Promise<string>;
  /** The same with one manifest per tag. */
  repoOf: (source: string | undefined, infos: Record<string, string>) => Promise<string>;
  /** A repository with these settings and, per tag, the whole text of its manifest. */
  repoFiles: (settings: string, manifests: Record<string, string>) => Promise<string>;
}

/** The settings of a merge-mode source; none leaves `sourceId` out. */
export const mergeSettings = (source: string | undefined): string =>
  `${source !== undefined ? `sourceId: ${source}\n` : ''}entityWrites: merge\n`;

/** A manifest whose `info` holds the tag and then the given lines (each ending in a newline). */
export const manifestOf = (tag: string, info: string): string =>
  `openapi: 3.0.1\ninfo:\n  x-cortex-tag: ${tag}\n${info}`;

/** Each live member read when used, so that the object can be taken before `beforeAll` has run. */
const lateBound = (live: () => RunningEmulator): RunningEmulator => ({
  get url() {
    return live().url;
  },
  get apiKey() {
    return live().apiKey;
  },
  get state() {
    return live().state;
  },
  get requests() {
    return live().requests;
  },
  stop: () => live().stop(),
  setFaults: (faults) => live().setFaults(faults),
  addApiKey: (key) => live().addApiKey(key),
  reset: () => live().reset(),
});

export interface HarnessOptions {
  /** Where the CLI sends its requests (a recording server in front of the emulator, say); the emulator by default. */
  cliBaseUrl?: () => string;
}

/** Registers the file's `beforeAll` (emulator up) and `afterAll` (emulator down, repositories removed). */
export const coOwnershipHarness = (options: HarnessOptions = {}): CoOwnershipHarness => {
  let started: RunningEmulator | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    started = await startTestEmulator();
  });
  afterAll(async () => {
    await started?.stop();
    for (const dir of dirs) await removeDir(dir);
  });
  const emulator = lateBound(() => {
    if (started === undefined) throw new Error('the emulator is started in beforeAll');
    return started;
  });

  const env = (): NodeJS.ProcessEnv => ({
    CORTEX_BASE_URL: options.cliBaseUrl?.() ?? emulator.url,
    CORTEX_API_KEY: API_KEY,
  });
  const api = async (method: string, path: string, body?: string): Promise<ApiAnswer> => {
    const res = await fetch(`${emulator.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  };
  const repoFiles = async (settings: string, manifests: Record<string, string>): Promise<string> => {
    const dir = await tempDir();
    dirs.push(dir);
    const files: Record<string, string> = { 'cortex-sync.yaml': settings };
    for (const [tag, text] of Object.entries(manifests)) files[`.cortex/catalog/${tag}.yaml`] = text;
    await writeFiles(dir, files);
    return dir;
  };
  const repoOf = (source: string | undefined, infos: Record<string, string>): Promise<string> =>
    repoFiles(
      mergeSettings(source),
      Object.fromEntries(Object.entries(infos).map(([tag, info]) => [tag, manifestOf(tag, info)])),
    );

  return {
    emulator,
    env,
    run: (dir, args) => cli(args, { cwd: dir, env: env() }),
    api,
    infoOf: async (tag) =>
      ((await api('GET', `/api/v1/catalog/${tag}/openapi`)).json as { info: Record<string, unknown> }).info,
    nameSources: (tag, sources) => {
      const claims = sources.map((s) => `    ${claimKeyOf(s)}: {source: ${s}}`).join('\n');
      return api(
        'PATCH',
        '/api/v1/open-api?failIfEntityDoesNotExist=true',
        manifestOf(tag, `  x-cortex-custom-metadata:\n${claims}\n`),
      );
    },
    leaveRecordsOut: (sources, reads = 1000, reject = []) =>
      emulator.setFaults({
        dropFromLists: sources.map((s) => ({ match: inventoryTag(s), reads, path: '/api/v1/catalog/descriptors' })),
        reject: reject.map((r) => ({
          method: 'GET',
          path: `/api/v1/catalog/${inventoryTag(r.source)}/openapi`,
          status: 500,
          message: r.message,
        })),
      }),
    repo: (source, tag, info) => repoOf(source, { [tag]: info }),
    repoOf,
    repoFiles,
  };
};
