/**
 * What a merge applies, against what was reviewed: every action and flag of a change is reviewed
 * (an unarchive too), the operator's `prune` input beats the repository's file, ownership-record
 * writes are applied and reviewed like any change, and the rerun of an interrupted apply finishes
 * the reviewed plan without calling it drift (while anything new is still drift).
 */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Engine, realEngine } from '../../src/action/engine.js';
import { EXAMPLES, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import {
  MERGE_SHA,
  PR_NUMBER,
  pullRequestPayload,
  pushPayload,
  reviewedDigest,
  runInProcess,
  workspaceEdits,
} from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;
let catalog: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-');
  workspace = join(root, 'repo');
  catalog = join(workspace, 'catalog');
  await mkdir(workspace);
  await cp(EXAMPLES, catalog, { recursive: true });
  github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

const planPr = (inputs: Record<string, string> = {}) =>
  runInProcess({
    eventName: 'pull_request',
    payload: pullRequestPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
  });
const merge = (inputs: Record<string, string> = {}, wrapEngine?: (engine: Engine) => Engine) =>
  runInProcess({
    eventName: 'push',
    payload: pushPayload(),
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
    ...(wrapEngine ? { wrapEngine } : {}),
  });
/** The catalog as it was before this pull request: applied. */
const applied = async () => expect((await merge({ 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);

const writes = () => emulator.requests.filter((r) => r.method !== 'GET');
const prComments = () => github.comments.filter((c) => c.issue === PR_NUMBER);
const editFile = async (path: string, edit: (text: string) => string) =>
  writeFile(join(catalog, path), edit(await readFile(join(catalog, path), 'utf8')));

describe('every action and flag of a change is reviewed', () => {
  it('an entity archived in the UI after the review is not unarchived on merge as "the plan reviewed"', async () => {
    await applied();
    await editFile('.cortex/catalog/search-api.yaml', (t) =>
      t.replace('Product search.', 'Product and catalog search.'),
    );
    expect((await planPr()).code).toBe(0);
    const ui = workspaceEdits(emulator);
    await ui.archiveEntity('search-api');

    const before = writes().length;
    const result = await merge();
    expect(result.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(await ui.entityState('search-api')).toBe('archived');
    expect(prComments().at(-1)?.body).toContain('`entity/search-api`: reviewed update, now update');
  });

  it('an entity whose ownership marker was removed after the review is not adopted on merge as "the plan reviewed"', async () => {
    await applied();
    const original = await readFile(join(catalog, '.cortex/catalog/search-api.yaml'), 'utf8');
    await editFile('.cortex/catalog/search-api.yaml', (t) =>
      t.replace('Product search.', 'Product and catalog search.'),
    );
    expect((await planPr()).code).toBe(0);
    // Someone writes the entity again from outside: same content, no marker. The field diff is
    // the reviewed one; only the adoption is new.
    await workspaceEdits(emulator).postDescriptor(original);

    const before = writes().length;
    const result = await merge();
    expect(result.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(prComments().at(-1)?.body).toContain('`entity/search-api`: reviewed update, now update');
  });
});

describe('the operator decides prune', () => {
  for (const [what, inputs] of [
    ['prune: false', { prune: 'false' }],
    ['no prune input', {}],
  ] as const) {
    it(`with ${what}, prune: true in the pull request's cortex-sync.yaml archives nothing on merge`, async () => {
      await applied();
      await rm(join(catalog, '.cortex/catalog/notifications.yaml'));
      await editFile('cortex-sync.yaml', (t) => t.replace('prune: false', 'prune: true'));
      const plan = await planPr(inputs);
      expect(plan.code).toBe(0);
      expect(plan.runtime.outputs.get('archive')).toBe('0');
      const result = await merge(inputs);
      expect(result.runtime.outputs.get('archive')).toBe('0');
      expect(await workspaceEdits(emulator).entityState('notifications')).toBe('active');
    });
  }

  it('with prune: true as an input, the removed manifest is archived (the reviewed plan said so)', async () => {
    await applied();
    await rm(join(catalog, '.cortex/catalog/notifications.yaml'));
    expect((await planPr({ prune: 'true' })).code).toBe(0);
    expect(prComments()[0]?.body).toContain('🟣 archive `notifications`');
    expect((await merge({ prune: 'true' })).code).toBe(0);
    expect(await workspaceEdits(emulator).entityState('notifications')).toBe('archived');
  });
});

describe('ownership-record writes', () => {
  it('a catalog page deleted in the UI whose manifest is removed: the record is repaired on merge', async () => {
    await applied();
    await workspaceEdits(emulator).deleteCatalogPage('databases');
    await rm(join(catalog, '.cortex/catalog-pages/databases.yaml'));

    const plan = await planPr();
    expect(plan.code).toBe(0);
    expect(plan.runtime.outputs.get('changes')).toBe('true');
    const reviewed = prComments()[0]?.body ?? '';
    expect(reviewed).toMatch(/Ownership record `[^`]+`: update after the changes \(removes 1\)/);
    expect(reviewedDigest(reviewed)).toMatch(/^sha256:/);

    const before = writes().length;
    const result = await merge();
    expect(result.code).toBe(0);
    expect(result.runtime.summaries.join('\n')).not.toContain('Nothing to apply');
    expect(writes().length).toBeGreaterThan(before);
    expect(prComments().at(-1)?.body).toMatch(/^### ✅ cortex-sync apply: 1 ok, 0 failed, 0 skipped/);
    // Repaired: the next run has nothing to write.
    const again = await merge();
    expect(again.code).toBe(0);
    expect(again.runtime.outputs.get('changes')).toBe('false');
    expect(again.runtime.summaries.join('\n')).toContain('Nothing to apply.');
  });
});

describe('a rerun of an interrupted apply', () => {
  /** The real engine, stopped (as the runner cancels a job) once `n` operations are done. */
  const stoppedAfter =
    (n: number) =>
    (engine: Engine): Engine => {
      const stop = new AbortController();
      let done = 0;
      const stopping = realEngine(stop.signal, {
        emit: (event) => {
          if (event.type === 'operation.done' && event.outcome === 'ok' && ++done >= n)
            stop.abort(new Error('SIGTERM'));
        },
      });
      return { ...engine, apply: (config, planLog, approve) => stopping.apply(config, planLog, approve) };
    };

  it('applies the rest of the reviewed plan and says so in the log, the job summary and the comment', async () => {
    expect((await planPr()).code).toBe(0);
    const reviewedCreates = Number((await planPr()).runtime.outputs.get('create'));
    const first = await merge({}, stoppedAfter(5));
    expect(first.code).not.toBe(0);
    const createdFirst = Number(first.runtime.outputs.get('create'));
    expect(createdFirst).toBeGreaterThan(0);
    expect(createdFirst).toBeLessThan(reviewedCreates);

    const rerun = await merge();
    expect(rerun.code).toBe(0);
    expect(Number(rerun.runtime.outputs.get('create'))).toBe(reviewedCreates - createdFirst);
    expect(rerun.runtime.log.join('\n')).toMatch(
      // One sentence, capitalised once (it read "The the plan…").
      new RegExp(`(^|\\n)The plan is the rest of the plan reviewed on #${PR_NUMBER}: \\d+ of its \\d+ steps remain`),
    );
    const result = prComments().at(-1)?.body ?? '';
    expect(result).toMatch(/^### ✅ cortex-sync apply: \d+ ok, 0 failed, 0 skipped/);
    expect(result).toContain('**the rest of the reviewed plan**');
    expect(rerun.runtime.summaries.join('\n')).toContain('**the rest of the reviewed plan**');
    // Everything reviewed is live now.
    expect(Number((await planPr()).runtime.outputs.get('create'))).toBe(0);
  });

  it('is still refused when anything in it is new or different', async () => {
    expect((await planPr()).code).toBe(0);
    expect((await merge({}, stoppedAfter(3))).code).not.toBe(0);
    // In the meantime someone creates an entity the rest of the plan would have created.
    const ui = workspaceEdits(emulator);
    const states = await Promise.all(
      ['search-api', 'notifications', 'ledger-db'].map(async (t) => [t, await ui.entityState(t)] as const),
    );
    const pending = states.find(([, state]) => state === 'absent')?.[0];
    expect(pending).toBeDefined();
    await ui.createService(pending ?? '');
    const before = writes().length;
    const rerun = await merge();
    expect(rerun.code).toBe(1);
    expect(writes()).toHaveLength(before);
    expect(prComments().at(-1)?.body).toContain(`\`entity/${pending}\`: reviewed create, now update`);
  });
});
