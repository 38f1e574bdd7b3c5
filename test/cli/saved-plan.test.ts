/**
 * Saved plans (issue 31): `plan --out FILE` writes the plan, `apply FILE` applies exactly that plan
 * or, when the workspace or the manifests moved since, writes nothing, exits 1 and names what
 * moved (Terraform's "Saved plan is stale"). Against the emulator on 127.0.0.1; a "UI edit" is a
 * direct API write to the emulator. The command's entrypoint runs in-process (`cli`: the binary's
 * own code, with no terminal and an explicit environment); the binary as it ships, as a child
 * process, runs where the process itself is what is tested: `apply FILE` with stdin /dev/null and no
 * approval given (it does not ask), and a plan file that is a FIFO (refused without hanging).
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { bundleCli } from '../support/cli-bundle.js';
import { API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';
import { type ProcessRun, runBin } from './spawn-cli.js';

let emulator: RunningEmulator;
let bundleDir: string;
let entry: string;
let dir: string;
let sourceId: string;

beforeAll(async () => {
  emulator = await startTestEmulator();
  bundleDir = await tempDir();
  entry = await bundleCli(bundleDir);
}, 240_000);
afterAll(async () => {
  await emulator.stop();
  await removeDir(bundleDir);
});

let n = 0;
beforeEach(async () => {
  dir = await tempDir();
  n += 1;
  sourceId = `saved-${n}`;
  await writeFiles(dir, {
    'cortex-sync.yaml': `sourceId: ${sourceId}\n`,
    '.cortex/catalog/a.yaml': serviceYaml(`saved-a-${n}`),
    '.cortex/catalog/b.yaml': serviceYaml(`saved-b-${n}`),
  });
  return () => removeDir(dir);
});

/** In-process, as the binary runs it with stdin /dev/null: no approval unless a test gives it. */
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  cli(args, { cwd: dir, emulator, env: { NO_COLOR: '1', CORTEX_SYNC_AUTO_APPROVE: undefined, ...env } });
/** The binary as it ships, as a child process. */
const runProcess = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runBin(entry, args, { cwd: dir, emulatorUrl: emulator.url, env });
const writesSince = (since: number) => emulator.requests.slice(since).filter((r) => r.method !== 'GET');
const planFile = () => join(dir, 'p.json');

/** A UI edit: the entity's title changed through the API, as a person in Cortex's UI would. */
const editInUi = async (tag: string, title: string): Promise<void> => {
  const res = await fetch(`${emulator.url}/api/v1/open-api`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
    body: serviceYaml(tag).replace(`title: ${tag}`, `title: ${title}`),
  });
  expect(res.status).toBe(200);
};
const titleOf = async (tag: string): Promise<string | undefined> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${encodeURIComponent(tag)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  if (res.status === 404) return undefined;
  return ((await res.json()) as { name?: string; title?: string }).name;
};

/** Applied once, then a manifest edit planned and saved: the plan updates entity a's title. */
const savedUpdate = async (): Promise<void> => {
  expect((await run(['apply', '--auto-approve'])).code).toBe(0);
  await writeFiles(dir, {
    '.cortex/catalog/a.yaml': serviceYaml(`saved-a-${n}`).replace(`title: saved-a-${n}`, 'title: Renamed A'),
  });
  const planned = await run(['plan', '--out', 'p.json']);
  expect(planned.code, planned.stderr).toBe(0);
};

// Several runs each: a loaded machine takes a while, never a wrong answer.
describe('plan --out, then apply FILE', { timeout: 240_000 }, () => {
  it('applies exactly the saved plan, without asking, and a second apply of it is stale', async () => {
    const planned = await run(['plan', '--out', 'p.json']);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stderr).toContain('p.json');
    const saved = JSON.parse(await readFile(planFile(), 'utf8')) as Record<string, unknown>;
    expect(saved.format).toBe('cortex-sync-plan');
    expect(saved.sourceId).toBe(sourceId);
    const before = emulator.requests.length;
    // No terminal, no --auto-approve: the saved plan was the review.
    const applied = await runProcess(['apply', 'p.json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(writesSince(before).length).toBeGreaterThan(0);
    expect(await titleOf(`saved-a-${n}`)).toBe(`saved-a-${n}`);
    expect(await titleOf(`saved-b-${n}`)).toBe(`saved-b-${n}`);
    // Applied: the workspace moved since the plan (the objects it creates exist now).
    const beforeAgain = emulator.requests.length;
    const again = await run(['apply', 'p.json']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('stale');
    expect(again.stderr).toContain(`entity/saved-a-${n} was created in the workspace since the plan`);
    expect(writesSince(beforeAgain)).toEqual([]);
  });

  it('a UI edit of an object the plan writes: exit 1, no write, names the object', async () => {
    await savedUpdate();
    await editInUi(`saved-a-${n}`, 'Edited in the UI');
    const before = emulator.requests.length;
    const r = await run(['apply', 'p.json']);
    expect(r.code).toBe(1);
    expect(writesSince(before)).toEqual([]);
    expect(r.stderr).toContain('stale');
    expect(r.stderr).toContain(`entity/saved-a-${n}`);
    expect(await titleOf(`saved-a-${n}`)).toBe('Edited in the UI');
  });

  it('a manifest edit since the plan: exit 1, no write, names the file', async () => {
    await savedUpdate();
    await writeFiles(dir, {
      '.cortex/catalog/b.yaml': serviceYaml(`saved-b-${n}`).replace(`title: saved-b-${n}`, 'title: B edited'),
    });
    const before = emulator.requests.length;
    const r = await run(['apply', 'p.json']);
    expect(r.code).toBe(1);
    expect(writesSince(before)).toEqual([]);
    expect(r.stderr).toContain('stale');
    expect(r.stderr).toContain('.cortex/catalog/b.yaml');
  });

  it('an update applied from the file is the saved one', async () => {
    await savedUpdate();
    const r = await run(['apply', 'p.json']);
    expect(r.code, r.stderr).toBe(0);
    expect(await titleOf(`saved-a-${n}`)).toBe('Renamed A');
  });

  it('never holds the key, a proxy credential or a header credential', async () => {
    const r = await run(['plan', '--out', 'p.json'], {
      HTTPS_PROXY: 'http://proxyuser:proxy-pass-s3cret@127.0.0.1:9',
      HTTP_PROXY: 'http://proxyuser:proxy-pass-s3cret@127.0.0.1:9',
      NO_PROXY: '127.0.0.1',
    });
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(planFile(), 'utf8');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('proxy-pass-s3cret');
    expect(text).not.toContain('proxyuser');
    expect(text).not.toMatch(/authorization|bearer/i);
  });
});

// Several runs each: a loaded machine takes a while, never a wrong answer.
describe('what apply FILE refuses, naming the file, writing nothing', { timeout: 240_000 }, () => {
  const refused = async (
    args: string[],
    pattern: RegExp,
    env: NodeJS.ProcessEnv = {},
    how: (args: string[], env: NodeJS.ProcessEnv) => Promise<ProcessRun> = run,
  ) => {
    const before = emulator.requests.length;
    const r = await how(args, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(pattern);
    expect(writesSince(before)).toEqual([]);
    return r;
  };
  const edit = async (change: (plan: Record<string, unknown>) => void) => {
    const plan = JSON.parse(await readFile(planFile(), 'utf8')) as Record<string, unknown>;
    change(plan);
    await writeFile(planFile(), JSON.stringify(plan));
  };

  it('a plan file of a newer version', async () => {
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await edit((p) => (p.version = 99));
    await refused(['apply', 'p.json'], /p\.json.*version 99/);
  });

  it('an edited plan file (its digest no longer matches)', async () => {
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await edit((p) => {
      const steps = p.steps as { change: { id: string } }[];
      (steps[0] as { change: { id: string } }).change.id = 'someone-else';
    });
    await refused(['apply', 'p.json'], /p\.json.*(digest|edited)/);
  });

  it('a corrupt plan file, and one that is not a plan', async () => {
    await writeFile(planFile(), '{"format": "cortex-sync-plan", "vers');
    await refused(['apply', 'p.json'], /p\.json/);
    await writeFile(planFile(), '{"hello": 1}');
    await refused(['apply', 'p.json'], /p\.json.*not a cortex-sync plan/);
  });

  it('an empty plan', async () => {
    expect((await run(['apply', '--auto-approve'])).code).toBe(0);
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await refused(['apply', 'p.json'], /p\.json.*no changes/);
  });

  it('a plan made for another workspace (base URL)', async () => {
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await refused(['apply', 'p.json', '--base-url', 'http://127.0.0.2:9'], /p\.json.*127\.0\.0\.2/);
  });

  it('flags that would change the plan: the file says them', async () => {
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await refused(['apply', 'p.json', '--source-id', 'other'], /--source-id/);
    await refused(['apply', 'p.json', '--prune'], /--prune/);
  });

  it('a manifest root outside the working tree (absolute, `..`, a symlink out): refused naming the field', async () => {
    const { sealSavedPlan } = await import('../../src/engine/saved-plan.js');
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    const plan = JSON.parse(await readFile(planFile(), 'utf8')) as { dir: string };
    expect(plan.dir).toBe('.');
    const elsewhere = await tempDir();
    try {
      await symlink(elsewhere, join(dir, 'out'));
      for (const root of ['/etc', '../..', 'out']) {
        await writeFile(planFile(), JSON.stringify(sealSavedPlan({ ...plan, dir: root } as never)));
        const before = emulator.requests.length;
        const r = await refused(
          ['apply', 'p.json'],
          /p\.json: field `dir`.*outside|p\.json: field `dir`.*(absolute|leaves)/,
        );
        expect(r.stderr).toContain(JSON.stringify(root));
        // Refused before any request: not a read of the workspace either.
        expect(emulator.requests.length).toBe(before);
      }
    } finally {
      await removeDir(elsewhere);
    }
  });

  it('--dir names the manifest root the saved plan is applied from', async () => {
    await writeFiles(dir, { 'infra/cortex-sync.yaml': `sourceId: ${sourceId}-infra\n` });
    await writeFiles(dir, { 'infra/.cortex/catalog/a.yaml': serviceYaml(`saved-i-${n}`) });
    const planned = await run(['plan', '--dir', 'infra', '--out', 'p.json']);
    expect(planned.code, planned.stderr).toBe(0);
    expect((JSON.parse(await readFile(planFile(), 'utf8')) as { dir: string }).dir).toBe('infra');
    const applied = await run(['apply', 'p.json', '--dir', 'infra']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await titleOf(`saved-i-${n}`)).toBe(`saved-i-${n}`);
  });

  it("an operator's decision is not taken from the file: the operator gives it again", async () => {
    expect((await run(['plan', '--out', 'p.json', '--allow-mass-delete'])).code).toBe(0);
    await refused(['apply', 'p.json'], /p\.json was made with --allow-mass-delete.*give --allow-mass-delete/);
    const applied = await run(['apply', 'p.json', '--allow-mass-delete']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await titleOf(`saved-a-${n}`)).toBe(`saved-a-${n}`);
  });

  it('an operator decision given that the plan was not made with: plan again', async () => {
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    await refused(['apply', 'p.json', '--allow-takeover'], /made without --allow-takeover/);
  });

  it('hostile values in the file are printed escaped', async () => {
    const { sealSavedPlan } = await import('../../src/engine/saved-plan.js');
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    const plan = JSON.parse(await readFile(planFile(), 'utf8')) as Record<string, unknown>;
    plan.sourceId = 'evil\u001b[2J\n::error::forged';
    await writeFile(planFile(), JSON.stringify(sealSavedPlan(plan as never)));
    const r = await refused(['apply', 'p.json'], /stale/);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).not.toMatch(/^::error::/m);
  });

  it('a file edited to prune (its digest made again): the archive it would add was never saved', async () => {
    const { sealSavedPlan } = await import('../../src/engine/saved-plan.js');
    // Five objects: removing one stays under the mass-delete guard's 25 %.
    for (const x of ['c', 'd', 'e'])
      await writeFiles(dir, { [`.cortex/catalog/${x}.yaml`]: serviceYaml(`saved-${x}-${n}`) });
    await savedUpdate();
    await rm(join(dir, '.cortex/catalog/b.yaml'));
    // Planned without --prune after b's manifest went: only a's update is saved.
    expect((await run(['plan', '--out', 'p.json'])).code).toBe(0);
    const plan = JSON.parse(await readFile(planFile(), 'utf8')) as { settings: { prune: boolean } };
    plan.settings.prune = true;
    await writeFile(planFile(), JSON.stringify(sealSavedPlan(plan as never)));
    const r = await refused(['apply', 'p.json'], /stale/);
    expect(r.stderr).toContain(`archive entity/saved-b-${n} is planned now`);
    expect(await titleOf(`saved-b-${n}`)).toBe(`saved-b-${n}`);
  });

  it('a plan file that is a FIFO, or a folder: refused without hanging', async () => {
    execFileSync('mkfifo', [planFile()]);
    await refused(['apply', 'p.json'], /p\.json: not a regular file/, {}, runProcess);
    await refused(['apply', '.cortex'], /\.cortex: not a regular file/, {}, runProcess);
  });

  it('plan --out into a folder that is a symlink: refused', async () => {
    const elsewhere = await tempDir();
    try {
      await symlink(elsewhere, join(dir, 'out'));
      const r = await run(['plan', '--out', 'out/p.json']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('symlink');
      expect(await readdir(elsewhere)).toEqual([]);
    } finally {
      await removeDir(elsewhere);
    }
  });

  it('plan --out refuses to write through a symlink', async () => {
    await writeFile(join(dir, 'target.json'), 'keep\n');
    await symlink(join(dir, 'target.json'), planFile());
    const r = await run(['plan', '--out', 'p.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('symlink');
    expect(await readFile(join(dir, 'target.json'), 'utf8')).toBe('keep\n');
  });
});
