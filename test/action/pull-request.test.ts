/**
 * The Action on a pull request, in-process: the real engine against the emulator, the octokit
 * port against a local fake of GitHub. One sticky comment, updated in place; a long plan stays
 * under GitHub's limit; a fork's pull request posts nothing; diagnostics are annotations at
 * their file and line; the key never reaches a comment.
 */
import { cp, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COMMENT_LIMIT } from '../../src/action/comment.js';
import {
  EXAMPLES,
  type Emulator,
  removeDir,
  serviceYaml,
  startTestEmulator,
  tempDir,
  writeFiles,
} from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { PR_NUMBER, pullRequestPayload, reviewedDigest, runInProcess, TOKEN } from './harness.js';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

/** The examples as `catalog/` in the repository: the manifest root is a subfolder. */
const withExamples = async (): Promise<void> => {
  await cp(EXAMPLES, join(workspace, 'catalog'), { recursive: true });
};

const planPr = (inputs: Record<string, string> = {}, payload = pullRequestPayload()) =>
  runInProcess({
    eventName: 'pull_request',
    payload,
    workspace,
    emulator,
    github,
    inputs: { dir: 'catalog', ...inputs },
  });

const prComments = () => github.comments.filter((c) => c.issue === PR_NUMBER);

describe('the plan comment on a pull request', () => {
  it('is created by the first plan and replaced by a new one when the plan changes (still one comment)', async () => {
    await withExamples();
    const first = await planPr();
    expect(first.code).toBe(0);
    expect(prComments()).toHaveLength(1);
    const [comment] = prComments();
    expect(comment?.body).toContain('<!-- cortex-sync:plan source=example-catalog dir=catalog -->');
    expect(comment?.body).toContain('entity/payments-api'.split('/')[1]);
    const firstDigest = reviewedDigest(comment?.body ?? '');
    expect(firstDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(github.writes().map((c) => c.method)).toEqual(['POST']);

    // Another push to the pull request: a manifest more.
    await writeFiles(join(workspace, 'catalog'), { '.cortex/catalog/billing-api.yaml': serviceYaml('billing-api') });
    const second = await planPr();
    expect(second.code).toBe(0);
    expect(prComments()).toHaveLength(1);
    // Never rewritten in place (a reviewed plan must not change under its review): a new comment, the old one deleted.
    expect(github.writes().map((c) => c.method)).toEqual(['POST', 'POST', 'DELETE']);
    const updated = prComments()[0]?.body ?? '';
    expect(updated).toContain('billing-api');
    expect(reviewedDigest(updated)).not.toBe(firstDigest);

    // Outputs: counts and the JSON plan as a file.
    expect(second.runtime.outputs.get('changes')).toBe('true');
    expect(Number(second.runtime.outputs.get('create'))).toBeGreaterThan(10);
    expect(second.runtime.outputs.get('exit-code')).toBe('0');
    const planFile = second.runtime.outputs.get('plan-json') ?? '';
    const plan = JSON.parse(await readFile(planFile, 'utf8')) as { formatVersion: number; changes: { id: string }[] };
    expect(plan.formatVersion).toBe(1);
    expect(plan.changes.map((c) => c.id)).toContain('billing-api');
    // Nothing was written to the workspace.
    expect(emulator.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('keeps one comment per directory: another manifest root gets its own comment', async () => {
    await withExamples();
    await writeFiles(join(workspace, 'other'), {
      'cortex-sync.yaml': 'sourceId: other-catalog\n',
      '.cortex/catalog/lonely.yaml': serviceYaml('lonely'),
    });
    await planPr();
    await planPr({ dir: 'other' });
    await planPr();
    expect(prComments()).toHaveLength(2);
    expect(prComments()[1]?.body).toContain('dir=other');
  });

  it('ignores a comment from someone without write access that copies the marker', async () => {
    await withExamples();
    const outsider = { login: 'stranger', type: 'User' as const, association: 'NONE' };
    github.comments.push({
      id: 1,
      issue: PR_NUMBER,
      body: '<!-- cortex-sync:plan source=example-catalog dir=catalog -->\nlooks legit',
      author: outsider,
    });
    expect((await planPr()).code).toBe(0);
    expect(prComments()).toHaveLength(2);
    expect(prComments()[0]?.body).toBe('<!-- cortex-sync:plan source=example-catalog dir=catalog -->\nlooks legit');
    expect(reviewedDigest(prComments()[1]?.body ?? '')).toMatch(/^sha256:/);
  });

  it('stays under 65,536 characters for a plan of 3,000 entities, pointing to the job summary', async () => {
    const files: Record<string, string> = { 'catalog/cortex-sync.yaml': 'sourceId: big-catalog\n' };
    for (let i = 0; i < 3000; i += 1) {
      const tag = `svc-${String(i).padStart(4, '0')}`;
      files[`catalog/.cortex/catalog/${tag}.yaml`] = serviceYaml(
        tag,
        `  description: Service number ${i}, with a description long enough to take some room in a table cell.\n  x-cortex-groups:\n    - tier-${i % 3}\n`,
      );
    }
    await writeFiles(workspace, files);
    const run = await planPr();
    expect(run.code).toBe(0);
    const body = prComments()[0]?.body ?? '';
    expect(body.length).toBeLessThan(COMMENT_LIMIT);
    expect(body).toContain('| **all** | 3000 | 0 | 0 | 0 | 0 |');
    expect(body).toMatch(
      /too long to show whole here: the field diffs of \d+ (?:creates|updates) not shown\. The full plan is in \[the job summary\]/,
    );
    expect(reviewedDigest(body)).toMatch(/^sha256:/);
    // The job summary names every change (and carries as many diffs as 1 MiB holds).
    const summary = run.runtime.summaries.join('\n');
    expect(summary.length).toBeLessThan(1024 * 1024);
    for (let i = 0; i < 3000; i += 1)
      expect(summary).toContain(`| 🟢 create | entity | \`svc-${String(i).padStart(4, '0')}\` |`);
  }, 120_000);

  it('from a fork: validates only, posts nothing, passes, and the job summary says why', async () => {
    await withExamples();
    github.readOnlyTokens.add(TOKEN);
    const run = await planPr({ 'api-key': '' }, pullRequestPayload({ fork: true }));
    expect(run.code).toBe(0);
    expect(github.writes()).toEqual([]);
    expect(emulator.requests).toEqual([]);
    expect(run.runtime.summaries.join('\n')).toMatch(/comes from a fork.*validated but not planned/s);
    expect(run.runtime.outputs.get('exit-code')).toBe('0');
    expect(run.runtime.annotations.filter((a) => a.severity === 'error')).toEqual([]);
  });

  it('from a fork with invalid manifests: fails with the problems annotated, still posts nothing', async () => {
    await withExamples();
    await writeFiles(join(workspace, 'catalog'), {
      '.cortex/catalog/broken.yaml': 'openapi: 3.0.1\ninfo:\n  title: x\n',
    });
    const run = await planPr({ 'api-key': '' }, pullRequestPayload({ fork: true }));
    expect(run.code).toBe(1);
    expect(github.writes()).toEqual([]);
    expect(run.runtime.annotations.some((a) => a.file === 'catalog/.cortex/catalog/broken.yaml')).toBe(true);
  });

  it('annotates every diagnostic at its file and line, relative to the repository root', async () => {
    await withExamples();
    await writeFiles(join(workspace, 'catalog'), {
      '.cortex/catalog/odd.yaml': serviceYaml('odd-service', '  x-cortex-unknown-key: 1\n'),
      '.cortex/catalog/twice.yaml': 'openapi: 3.0.1\ninfo:\n  title: a\n  title: b\n  x-cortex-tag: twice\n',
    });
    const run = await planPr();
    expect(run.code).toBe(1);
    expect(run.runtime.annotations).toContainEqual(
      expect.objectContaining({ severity: 'warning', file: 'catalog/.cortex/catalog/odd.yaml', line: 6, column: 3 }),
    );
    const errors = run.runtime.annotations.filter((a) => a.severity === 'error');
    expect(errors).toContainEqual(expect.objectContaining({ file: 'catalog/.cortex/catalog/twice.yaml', line: 4 }));
    for (const a of errors) expect(a.line).toBeGreaterThan(0);
    // The comment says so too, and carries no digest: there is nothing to apply.
    const body = prComments()[0]?.body ?? '';
    expect(body).toContain('invalid manifests');
    expect(body).toContain('catalog/.cortex/catalog/twice.yaml:4');
    expect(reviewedDigest(body)).toBeUndefined();
    expect(run.runtime.outputs.get('exit-code')).toBe('1');
  });

  it('never puts the API key in a comment, the job summary or the plan file', async () => {
    await withExamples();
    const key = emulator.apiKey;
    await writeFiles(join(workspace, 'catalog'), {
      '.cortex/catalog/leaky.yaml': serviceYaml('leaky', `  description: "the key is ${key}"\n`),
    });
    const run = await planPr();
    expect(run.code).toBe(0);
    const body = prComments()[0]?.body ?? '';
    expect(body).toContain('leaky');
    expect(body).not.toContain(key);
    expect(run.runtime.summaries.join('\n')).not.toContain(key);
    expect(await readFile(run.runtime.outputs.get('plan-json') ?? '', 'utf8')).not.toContain(key);
    expect(run.runtime.masked).toContain(key);
  });

  it('with comment: false, plans without commenting', async () => {
    await withExamples();
    const run = await planPr({ comment: 'false' });
    expect(run.code).toBe(0);
    expect(github.calls).toEqual([]);
  });
});
