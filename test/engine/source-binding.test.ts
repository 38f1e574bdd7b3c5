/**
 * A source id is bound to the origin that first applied it: a repository whose `cortex-sync.yaml`
 * names another repository's source id removes, changes and takes over nothing of it, unless the
 * operator passes --allow-takeover. The plan names every setting that widens deletes and where it
 * came from. The CLI runs in-process against the emulator on 127.0.0.1.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { startEmulator } from '../../packages/emulator/src/server.js';
import {
  INVENTORY_ENTITY_TYPE,
  indexInventories,
  inventoryDescriptor,
  inventoryTag,
  tagSharedWith,
} from '../../src/kinds/entity/records/inventory.js';
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

/** A checkout of `remote` holding `files`. */
const checkout = async (remote: string, files: Record<string, string>): Promise<string> => {
  const dir = await tempDir();
  dirs.push(dir);
  await writeFiles(dir, { '.git/config': `[remote "origin"]\n\turl = ${remote}\n`, ...files });
  return dir;
};

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${emulator.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${API_KEY}`, ...(init.headers as Record<string, string> | undefined) },
  });

/** `active`, `archived` or `gone`. */
const entityState = async (tag: string): Promise<string> => {
  const res = await api(`/api/v1/catalog/${encodeURIComponent(tag)}`);
  if (res.status === 404) return 'gone';
  return ((await res.json()) as { isArchived?: boolean }).isArchived ? 'archived' : 'active';
};

const recordOf = async (sourceId: string): Promise<Record<string, unknown>> => {
  const res = await api(`/api/v1/catalog/${encodeURIComponent(inventoryTag(sourceId))}/openapi`);
  const body = (await res.json()) as { info: { 'x-cortex-definition': Record<string, unknown> } };
  return body.info['x-cortex-definition'];
};

const writesSince = (from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.startsWith('/_emulator'));

const B_TAGS = ['b-one', 'b-two', 'b-three', 'b-four'];
const repoB = () =>
  checkout('git@github.com:acme/repo-b.git', {
    'cortex-sync.yaml': 'sourceId: repo-b\n',
    ...Object.fromEntries(B_TAGS.map((t) => [`services/${t}/cortex.yaml`, serviceYaml(t)])),
  });
/** Repo A's file claims B's source id with every setting that widens deletes, and declares one of B's entities. */
const HOSTILE_CONFIG = 'sourceId: repo-b\nprune: true\nmaxDeleteShare: 1\npruneEntities: delete\n';
const repoA = () =>
  checkout('https://github.com/acme/repo-a', {
    'cortex-sync.yaml': HOSTILE_CONFIG,
    'services/b-one/cortex.yaml': serviceYaml('b-one'),
  });

describe('a repository cannot delete another repository’s objects', () => {
  it("repo A claiming repo B's source id with prune settings in its file deletes nothing of B: refused, source-claimed, both origins named", async () => {
    const b = await repoB();
    const first = await cli(['apply'], { emulator, cwd: b });
    expect(first.code, first.stderr).toBe(0);
    expect(await recordOf('repo-b')).toMatchObject({ source: 'repo-b', origin: 'github.com/acme/repo-b' });

    const a = await repoA();
    const from = emulator.requests.length;
    const run = await cli(['apply'], { emulator, cwd: a });
    expect(run.code).toBe(1);
    const out = run.stdout + run.stderr;
    expect(out).toMatch(/source-claimed/);
    expect(out).toContain('github.com/acme/repo-b');
    expect(out).toContain('github.com/acme/repo-a');
    expect(writesSince(from)).toEqual([]); // not even the lease
    for (const tag of B_TAGS) expect(await entityState(tag), tag).toBe('active');

    // B's own apply is unaffected.
    const again = await cli(['apply'], { emulator, cwd: b });
    expect(again.code, again.stderr).toBe(0);
  });

  it('the plan of the claiming repository names the widening settings and where they came from, and lists no removal', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const a = await repoA();
    const text = await cli(['plan'], { emulator, cwd: a });
    expect(text.stdout).toMatch(/Settings that widen what this plan of source `repo-b`/);
    expect(text.stdout).toMatch(/prune: true \(cortex-sync\.yaml:2\)/);
    expect(text.stdout).toMatch(/pruneEntities: delete \(cortex-sync\.yaml:4\)/);
    expect(text.stdout).not.toMatch(/- delete entity/);

    const json = await cli(['plan', '--output', 'json', '--prune'], {
      emulator,
      cwd: a,
      env: { CORTEX_SYNC_PRUNE: 'false' },
    });
    const plan = JSON.parse(json.stdout) as {
      summary: { delete: number };
      deleteScope: {
        binding: string;
        origin: string;
        recordedOrigin: string;
        widened: { setting: string; from: string }[];
      };
    };
    expect(plan.summary.delete).toBe(0);
    expect(plan.deleteScope).toMatchObject({
      binding: 'claimed',
      origin: 'github.com/acme/repo-a',
      recordedOrigin: 'github.com/acme/repo-b',
    });
    // maxDeleteShare: 1 in the file is not used (a file may only lower the guard), so it widens nothing.
    expect(Object.fromEntries(plan.deleteScope.widened.map((w) => [w.setting, w.from]))).toEqual({
      prune: 'flag',
      pruneEntities: 'file',
    });

    const markdown = await cli(['plan', '--output', 'markdown'], {
      emulator,
      cwd: a,
      env: { CORTEX_SYNC_PRUNE: 'true' },
    });
    expect(markdown.stdout).toMatch(/> \[!WARNING\]\n> \*\*Settings that widen what this plan may remove\*\*/);
    expect(markdown.stdout).toMatch(/> - `prune`: `true` from `CORTEX_SYNC_PRUNE`/);
  });

  it('--allow-takeover (the operator) rebinds the source to the new origin; the old origin is then the one refused', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const a = await repoA();
    const preview = await cli(['plan', '--allow-takeover'], { emulator, cwd: a });
    expect(preview.stderr).toMatch(
      /warning: source id `repo-b` belongs to origin `github\.com\/acme\/repo-b`; --allow-takeover rebinds it/,
    );
    // The operator also allows removing 3 of 4 (the file may not raise the guard).
    const takeover = await cli(['apply', '--allow-takeover', '--allow-mass-delete'], { emulator, cwd: a });
    expect(takeover.code, takeover.stderr).toBe(0);
    expect(takeover.stdout).toMatch(
      /rebind the source id from origin `github\.com\/acme\/repo-b` to `github\.com\/acme\/repo-a`/,
    );
    expect(await recordOf('repo-b')).toMatchObject({ origin: 'github.com/acme/repo-a' });
    expect(await entityState('b-one')).toBe('active');
    for (const tag of ['b-two', 'b-three', 'b-four']) expect(await entityState(tag), tag).toBe('gone');

    const back = await cli(['apply'], { emulator, cwd: b });
    expect(back.code).toBe(1);
    expect(back.stderr).toMatch(/source-claimed/);
  });

  it('allowTakeover in cortex-sync.yaml is an error: only the operator decides a takeover', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const a = await checkout('https://github.com/acme/repo-a', {
      'cortex-sync.yaml': `${HOSTILE_CONFIG}allowTakeover: true\n`,
      'services/b-one/cortex.yaml': serviceYaml('b-one'),
    });
    const from = emulator.requests.length;
    const run = await cli(['apply'], { emulator, cwd: a });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cortex-sync\.yaml:5.*allowTakeover/s);
    expect(emulator.requests.length).toBe(from);
    for (const tag of B_TAGS) expect(await entityState(tag), tag).toBe('active');
  });

  it('a fresh clone of the same repository (ssh, https with a token, another folder, CI) is the same origin', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const files = {
      'cortex-sync.yaml': 'sourceId: repo-b\nprune: true\nmaxDeleteShare: 1\n',
      ...Object.fromEntries(B_TAGS.slice(0, 3).map((t) => [`services/${t}/cortex.yaml`, serviceYaml(t)])),
    };
    const clone = await checkout('https://x-access-token:ghs_abc123@GitHub.com/Acme/repo-b.git', files);
    const run = await cli(['apply'], { emulator, cwd: clone });
    expect(run.code, run.stderr).toBe(0);
    expect(await entityState('b-four')).toBe('archived');
    const ci = await checkout('https://github.com/someone/else', files);
    const fromCi = await cli(['apply'], { emulator, cwd: ci, env: { GITHUB_REPOSITORY: 'acme/repo-b' } });
    expect(fromCi.code, fromCi.stderr).toBe(0);
    expect(JSON.stringify(await recordOf('repo-b'))).not.toContain('ghs_abc123');
  });
});

describe('folders and tags', () => {
  it('one folder of a monorepo naming its sibling folder’s source id is another origin: refused', async () => {
    const root = await checkout('git@github.com:acme/monorepo.git', {
      'teamB/services/b1/cortex.yaml': serviceYaml('mono-b1'),
      'teamB/services/b2/cortex.yaml': serviceYaml('mono-b2'),
      'teamA/cortex-sync.yaml': 'sourceId: github.com/acme/monorepo//teamB\nprune: true\nmaxDeleteShare: 1\n',
      'teamA/services/b1/cortex.yaml': serviceYaml('mono-b1'),
    });
    expect((await cli(['apply', '--dir', 'teamB'], { emulator, cwd: root })).code).toBe(0);
    const run = await cli(['apply', '--dir', 'teamA'], { emulator, cwd: root });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /belongs to origin `github\.com\/acme\/monorepo\/\/teamB`.*comes from origin `github\.com\/acme\/monorepo\/\/teamA`/,
    );
    expect(await entityState('mono-b2')).toBe('active');
  });

  it('a source id made to share another source’s record tag (8 hex digits of a hash) is refused, not written over it', () => {
    const index = indexInventories([], 'x');
    index.bySource.set('repo-b', new Set());
    const tagOf = (source: string) => (source === 'repo-b' || source === 'repo_b' ? 'same-tag' : `tag-${source}`);
    expect(tagSharedWith(index, 'repo_b', tagOf)).toBe('repo-b');
    expect(tagSharedWith(index, 'repo-b', tagOf)).toBeUndefined();
    expect(tagSharedWith(index, 'repo-c', tagOf)).toBeUndefined();
  });
});

describe('records written before origins were recorded', () => {
  /** B's inventory as an earlier version wrote it: no origin. */
  const legacyRecordOfB = async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const keys = new Set(B_TAGS.map((t) => `entity/${t}` as const));
    const res = await api('/api/v1/open-api', {
      method: 'POST',
      headers: { 'content-type': 'application/openapi;charset=UTF-8' },
      body: inventoryDescriptor('repo-b', keys),
    });
    expect(res.status).toBeLessThan(300);
    expect((await recordOf('repo-b')).origin).toBeUndefined();
    return b;
  };

  it('the next apply binds the record to its origin, says so, and removes nothing in that apply', async () => {
    const b = await legacyRecordOfB();
    await rm(join(b, 'services/b-four'), { recursive: true });
    const preview = await cli(['plan', '--prune'], { emulator, cwd: b });
    expect(preview.stderr).toMatch(
      /binds it to `github\.com\/acme\/repo-b`, and removals wait for the next apply \(1 removal/,
    );
    expect(preview.stderr).toMatch(/\[source-bound\]/);
    const bind = await cli(['apply', '--prune'], { emulator, cwd: b });
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.stdout).toMatch(/bind the source id to origin `github\.com\/acme\/repo-b`/);
    expect(await entityState('b-four')).toBe('active');
    expect(await recordOf('repo-b')).toMatchObject({ origin: 'github.com/acme/repo-b' });

    const next = await cli(['apply', '--prune'], { emulator, cwd: b });
    expect(next.code, next.stderr).toBe(0);
    expect(await entityState('b-four')).toBe('archived');
  });

  it('a hostile first apply binds an unbound record but removes nothing; the rightful repository is then refused and told by whom', async () => {
    const b = await legacyRecordOfB();
    const a = await repoA();
    const hostile = await cli(['apply'], { emulator, cwd: a });
    expect(hostile.code, hostile.stderr).toBe(0);
    for (const tag of B_TAGS) expect(await entityState(tag), tag).toBe('active');
    const rightful = await cli(['apply'], { emulator, cwd: b });
    expect(rightful.code).toBe(1);
    expect(rightful.stderr).toMatch(/belongs to origin `github\.com\/acme\/repo-a`/);
  });

  it('a record edited by hand to name another origin refuses the rightful repository (fail closed) until the operator rebinds it', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const keys = new Set(B_TAGS.map((t) => `entity/${t}` as const));
    await api('/api/v1/open-api', {
      method: 'POST',
      headers: { 'content-type': 'application/openapi;charset=UTF-8' },
      body: inventoryDescriptor('repo-b', keys, { origin: 'github.com/evil/fork' }),
    });
    await rm(join(b, 'services/b-four'), { recursive: true });
    const refused = await cli(['apply', '--prune'], { emulator, cwd: b });
    expect(refused.code).toBe(1);
    expect(await entityState('b-four')).toBe('active');
    const rebind = await cli(['apply', '--prune', '--allow-takeover'], { emulator, cwd: b });
    expect(rebind.code, rebind.stderr).toBe(0);
    expect(await recordOf('repo-b')).toMatchObject({ origin: 'github.com/acme/repo-b' });
  });

  it('an origin that is not a string in the record is never equal to any origin', async () => {
    const b = await repoB();
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    const body = [
      'openapi: 3.0.1',
      'info:',
      '  title: edited',
      `  x-cortex-tag: ${inventoryTag('repo-b')}`,
      `  x-cortex-type: ${INVENTORY_ENTITY_TYPE}`,
      '  x-cortex-definition:',
      '    source: repo-b',
      '    origin: {url: github.com/acme/repo-b}',
      `    objects: {entity: [${B_TAGS.join(', ')}]}`,
      '',
    ].join('\n');
    await api('/api/v1/open-api', {
      method: 'POST',
      headers: { 'content-type': 'application/openapi;charset=UTF-8' },
      body,
    });
    const run = await cli(['apply', '--prune'], { emulator, cwd: b });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/unreadable origin/);
  });
});

describe('the protect patterns of the last apply', () => {
  it('a pattern removed from cortex-sync.yaml since the last apply is named in the plan header', async () => {
    const b = await checkout('git@github.com:acme/repo-b.git', {
      'cortex-sync.yaml': 'sourceId: repo-b\nprotect: ["entity/b-*", "initiative/*"]\n',
      'services/b-one/cortex.yaml': serviceYaml('b-one'),
    });
    expect((await cli(['apply'], { emulator, cwd: b })).code).toBe(0);
    expect(await recordOf('repo-b')).toMatchObject({ settings: { protect: ['entity/b-*', 'initiative/*'] } });
    await writeFiles(b, { 'cortex-sync.yaml': 'sourceId: repo-b\nprotect: ["initiative/*"]\n' });
    const plan = await cli(['plan', '--output', 'json'], { emulator, cwd: b });
    const doc = JSON.parse(plan.stdout) as { deleteScope: { widened: unknown[] } };
    expect(doc.deleteScope.widened).toEqual([
      {
        setting: 'protect',
        value: ['entity/b-*'],
        from: 'file',
        name: 'cortex-sync.yaml:2',
        effect: expect.stringContaining('no longer protected'),
      },
    ]);
  });
});

describe('two origins racing for a first apply', () => {
  it('exactly one binds the new source id; the other is refused and creates nothing', async () => {
    await emulator.stop();
    emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0, faults: { latencyMs: 60 } });
    const first = await checkout('git@github.com:acme/one.git', {
      'cortex-sync.yaml': 'sourceId: shared\n',
      'services/one/cortex.yaml': serviceYaml('from-one'),
    });
    const second = await checkout('git@github.com:acme/two.git', {
      'cortex-sync.yaml': 'sourceId: shared\n',
      'services/two/cortex.yaml': serviceYaml('from-two'),
    });
    const runs = await Promise.all([
      cli(['apply'], { emulator, cwd: first }),
      cli(['apply'], { emulator, cwd: second }),
    ]);
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1]);
    const winner = runs[0]?.code === 0 ? 'one' : 'two';
    const loser = winner === 'one' ? 'two' : 'one';
    expect(await recordOf('shared')).toMatchObject({ origin: `github.com/acme/${winner}` });
    expect(await entityState(`from-${winner}`)).toBe('active');
    expect(await entityState(`from-${loser}`)).toBe('gone');
    expect(runs.find((r) => r.code === 1)?.stderr).toMatch(/source-claimed/);
  });
});

/**
 * A repository's `cortex-sync.yaml` may name a source id that reads as another source's (`Repo-B`,
 * or `rеpo-b` with a Cyrillic `е`): the plan would be headed with a name a reviewer takes for that
 * source. Such a new source id is warned about, with the characters that differ shown as code
 * points, and the run still manages and removes nothing of the recorded source.
 */
const applyLookalikeTarget = async () => {
  const b = await checkout('git@github.com:acme/repo-b.git', {
    'cortex-sync.yaml': 'sourceId: repo-b\n',
    'services/b-one/cortex.yaml': serviceYaml('b-one'),
  });
  const run = await cli(['apply'], { emulator, cwd: b });
  expect(run.code, run.stderr).toBe(0);
  return b;
};

const planAsSourceId = async (sourceId: string) => {
  const a = await checkout('https://github.com/acme/repo-a', {
    'cortex-sync.yaml': `sourceId: ${JSON.stringify(sourceId)}\nprune: true\n`,
    'services/a-one/cortex.yaml': serviceYaml('a-one'),
  });
  return cli(['plan', '--prune'], { emulator, cwd: a });
};

describe('a new source id that reads as a recorded one', () => {
  it('a Cyrillic look-alike is warned about with the differing letter shown as a code point, and touches nothing of the other source', async () => {
    await applyLookalikeTarget();
    const run = await planAsSourceId('r\u0435po-b');
    const out = run.stdout + run.stderr;
    expect(out).toContain('lookalike-source-id');
    expect(out).toContain(
      'source id `r\\u{435}po-b` is new to this workspace but reads as `repo-b` (Unicode look-alike, invisible characters or punctuation at its ends), a source that already has an ownership record',
    );
    expect(out).not.toMatch(/b-one/);
    expect(await entityState('b-one')).toBe('active');
  });

  it('a case-only variant is warned about as such', async () => {
    await applyLookalikeTarget();
    const out = await planAsSourceId('Repo-B').then((r) => r.stdout + r.stderr);
    expect(out).toContain('source id `Repo-B` is new to this workspace but differs only in case from `repo-b`');
  });

  it('no warning for an unrelated new source id, nor for the recorded source planning again', async () => {
    const b = await applyLookalikeTarget();
    expect((await planAsSourceId('repo-a')).stdout).not.toContain('lookalike-source-id');
    const again = await cli(['plan'], { emulator, cwd: b });
    expect(again.stdout + again.stderr).not.toContain('lookalike-source-id');
  });
});
