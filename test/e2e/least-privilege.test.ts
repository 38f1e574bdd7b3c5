/**
 * Issue 29 item 8: the README's least-privilege table (command → permissions) is exact. A key whose
 * custom role holds exactly a command's permissions runs it over examples/; a key missing any one of
 * them makes it fail, naming the operation and the 403, never the key.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, copyExamples, type Emulator, removeDir, startTestEmulator } from './harness.js';

// The README's table "Least privilege per command", by the emulator's (the vendor's) names.
// EDIT_ENTITIES: the vendor puts entity and dependency reads under it; the emulator lets any valid
// key read them, so its absence is shown only for the commands that write (READ_ONLY_CHECKED).
const PLAN = ['EDIT_ENTITY_TYPES', 'EDIT_ENTITIES', 'VIEW_CATALOGS', 'VIEW_INITIATIVES'];
const READ_ONLY_CHECKED = ['EDIT_ENTITY_TYPES', 'VIEW_CATALOGS', 'VIEW_INITIATIVES'];
const APPLY = [
  'EDIT_ENTITY_TYPES',
  'VIEW_CATALOGS',
  'EDIT_CATALOGS',
  'EDIT_INITIATIVES',
  'EDIT_ENTITIES',
  'CONFIGURE_SCAFFOLDER',
  'EDIT_SCORECARDS',
];
const PRUNE = [...APPLY, 'ARCHIVE_ENTITIES'];
const EXPORT = PLAN;
// status reads the ownership record (found through the entity types) and the lease: entity reads.
const STATUS = ['EDIT_ENTITY_TYPES', 'EDIT_ENTITIES'];

const postControl = async (emulator: Emulator, path: string, body: unknown): Promise<Record<string, unknown>> => {
  const r = await fetch(emulator.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
  return (await r.json()) as Record<string, unknown>;
};

/** A fresh key holding these roles. */
const keyWithRoles = async (emulator: Emulator, roles: unknown[]): Promise<string> => {
  const { apiKey } = await postControl(emulator, '/_emulator/api-keys', { roles });
  expect(typeof apiKey).toBe('string');
  return String(apiKey);
};

let roleCount = 0;
/** A fresh key whose only role is a custom role holding exactly `permissions`. */
const keyWith = async (emulator: Emulator, permissions: readonly string[]): Promise<string> => {
  const tag = `least-${++roleCount}`;
  await postControl(emulator, '/_emulator/roles', { tag, permissions });
  return keyWithRoles(emulator, [{ type: 'CUSTOM', tag }]);
};

const without = (set: readonly string[], one: string): string[] => set.filter((p) => p !== one);

interface Case {
  name: string;
  args: (dir: string) => string[];
  permissions: readonly string[];
  /** The permissions whose absence this run shows (default: all of them). */
  checked?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Brings the emulator to the state the command starts from (after a reset). */
  before: (emulator: Emulator, dir: string) => Promise<void>;
}

const applyAll = async (emulator: Emulator, dir: string): Promise<void> => {
  expect((await cli(['apply', '--dir', '.'], { emulator, cwd: dir })).code).toBe(0);
};
const nothing = async (): Promise<void> => {};

const CASES: Case[] = [
  { name: 'plan', args: () => ['plan', '--dir', '.'], permissions: PLAN, checked: READ_ONLY_CHECKED, before: nothing },
  {
    name: 'apply --dry-run',
    args: () => ['apply', '--dir', '.', '--dry-run'],
    permissions: PLAN,
    checked: READ_ONLY_CHECKED,
    before: nothing,
  },
  { name: 'apply', args: () => ['apply', '--dir', '.', '--auto-approve'], permissions: APPLY, before: nothing },
  {
    name: 'apply --prune',
    args: () => ['apply', '--dir', '.', '--auto-approve', '--prune'],
    permissions: PRUNE,
    // The rest of the set is apply's, shown above; from an applied state the prune run needs this one more.
    checked: ['ARCHIVE_ENTITIES'],
    before: async (emulator, dir) => {
      await applyAll(emulator, dir);
      await rm(join(dir, '.cortex', 'catalog', 'search-api.yaml'));
    },
  },
  {
    name: 'apply --prune, pruneEntities delete',
    args: () => ['apply', '--dir', '.', '--auto-approve', '--prune'],
    permissions: [...APPLY, 'DELETE_ENTITIES'],
    checked: ['DELETE_ENTITIES'],
    env: { CORTEX_SYNC_PRUNE_ENTITIES: 'delete' },
    // Deleting refuses an entity another manifest still references (archiving does not).
    before: async (emulator, dir) => {
      await applyAll(emulator, dir);
      await rm(join(dir, '.cortex', 'catalog', 'ledger-db.yaml'));
    },
  },
  {
    name: 'status',
    args: () => ['status', '--dir', '.', '--objects'],
    permissions: STATUS,
    checked: ['EDIT_ENTITY_TYPES'],
    before: applyAll,
  },
  {
    name: 'export',
    args: (dir) => ['export', '--out', join(dir, 'exported'), '--source-id', 'example-catalog'],
    permissions: EXPORT,
    checked: READ_ONLY_CHECKED,
    before: async (emulator, dir) => {
      await applyAll(emulator, dir);
      await rm(join(dir, 'exported'), { recursive: true, force: true });
    },
  },
];

describe.each(CASES)('least privilege: $name', ({ args, permissions, checked, env, before }) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(async () => {
    await emulator.stop();
  });

  /** Runs the command from a fresh state with a key holding exactly `held`. */
  const run = async (held: readonly string[]) => {
    emulator.reset();
    const dir = await copyExamples();
    try {
      await before(emulator, dir);
      const key = await keyWith(emulator, held);
      const result = await cli(args(dir), { emulator, cwd: dir, env: { ...env, CORTEX_API_KEY: key } });
      return { ...result, key };
    } finally {
      await removeDir(dir);
    }
  };

  it('succeeds with exactly the permissions the table lists', async () => {
    const r = await run(permissions);
    expect(r.stderr).not.toMatch(/403/);
    expect(r.code).toBe(0);
  });

  it.each((checked ?? permissions).map((p) => [p]))(
    'fails closed, naming the operation and the 403, without %s',
    async (p) => {
      const r = await run(without(permissions, p));
      expect(r.code).toBe(1);
      // The operation, its request and the 403 with the API's message (which names the permission).
      expect(r.stderr).toMatch(new RegExp(` failed: (GET|POST|PUT|PATCH|DELETE) /api/v1/\\S+ → HTTP 403: [^\\n]*${p}`));
      expect(r.stderr + r.stdout).not.toContain(r.key);
    },
  );
});

describe('least privilege: keys an operator might hand out', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startTestEmulator();
  });
  afterAll(async () => {
    await emulator.stop();
  });
  const fresh = async (): Promise<void> => {
    emulator.reset();
    dir = await copyExamples();
  };
  const run = async (argv: string[], key: string) => {
    try {
      return await cli(argv, { emulator, cwd: dir, env: { CORTEX_API_KEY: key } });
    } finally {
      await removeDir(dir);
    }
  };

  it('a READ_ONLY key cannot plan: the error names listing entity types and the 403', async () => {
    await fresh();
    const key = await keyWithRoles(emulator, [{ type: 'DEFAULT', role: 'READ_ONLY' }]);
    const r = await run(['plan', '--dir', '.'], key);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /list entity types failed: GET \/api\/v1\/catalog\/definitions\S* → HTTP 403: .*EDIT_ENTITY_TYPES/,
    );
    expect(r.stderr + r.stdout).not.toContain(key);
  });

  it('a READ_ONLY role plus a custom role holding the rest of the set plans', async () => {
    await fresh();
    await postControl(emulator, '/_emulator/roles', { tag: 'types-only', permissions: ['EDIT_ENTITY_TYPES'] });
    const key = await keyWithRoles(emulator, [
      { type: 'DEFAULT', role: 'READ_ONLY' },
      { type: 'CUSTOM', tag: 'types-only' },
    ]);
    expect((await run(['plan', '--dir', '.'], key)).code).toBe(0);
  });

  it('a key with more than apply needs applies the same', async () => {
    await fresh();
    const key = await keyWith(emulator, [...PRUNE, 'DELETE_ENTITIES', 'EDIT_API_KEYS', 'VIEW_GITOPS_LOGS']);
    const r = await run(['apply', '--dir', '.', '--auto-approve'], key);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/403/);
  });

  it('export with a key that cannot read Initiatives fails closed and writes no export', async () => {
    await fresh();
    await applyAll(emulator, dir);
    const out = join(dir, 'exported');
    const key = await keyWith(emulator, without(EXPORT, 'VIEW_INITIATIVES'));
    const r = await cli(['export', '--out', out, '--source-id', 'example-catalog'], {
      emulator,
      cwd: dir,
      env: { CORTEX_API_KEY: key },
    });
    try {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/failed: GET \/api\/v1\/\S+ → HTTP 403: .*VIEW_INITIATIVES/);
      await expect(readdir(out)).rejects.toThrow(/ENOENT/);
    } finally {
      await removeDir(dir);
    }
  });
});
