/**
 * What the watcher says about each run: every warning of a revision once, with its `file:line`
 * (not again on each run of the same revision, again on a revision that still has it), and the
 * objects a run created, updated, healed, archived or deleted — a count and the first few names,
 * escaped — in its log line and on `/status`. `strict: true` in `cortex-sync.yaml` (or `--strict`)
 * makes every warning an error: the run is invalid and writes nothing.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  API_KEY,
  CONFIG_YAML,
  createRemote,
  type Emulator,
  entityTitle,
  removeDir,
  type RunningWatch,
  serviceYaml,
  startTestEmulator,
  startWatch,
  tempDir,
  writeFiles,
  writesSince,
} from './harness.js';

let emulator: Emulator;
let root: string;
let watch: RunningWatch | undefined;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  if (watch) expect(await watch.stop()).toBe(0);
  watch = undefined;
  await emulator.stop();
  await removeDir(root);
});

/** A service with an unknown `x-cortex-*` key the API drops: a warning at line 6. */
const warned = (tag: string, title = tag): string => `${serviceYaml(tag, title)}  x-cortex-description: dropped\n`;
const WARNING = /cortex\.yaml:6:3: info\.x-cortex-description: unknown Cortex key; the API silently drops it/;

/** Git runs on a loaded machine: waits are for conditions, generous. */
const LOADED = 60_000;

const warningLines = (w: RunningWatch) => w.logs().filter((l) => l.msg === 'manifest warning');

describe('the watcher logs each warning once per revision', () => {
  it('with file:line; not again on a heal run of the same revision; again on a revision that renames the file', async () => {
    const remote = await createRemote(root);
    const first = await remote.push({ 'cortex-sync.yaml': CONFIG_YAML, 'svc/cortex.yaml': warned('warned-svc') });
    watch = await startWatch(
      { repo: remote.url, branch: 'main', interval: 100, healInterval: 200 },
      { emulator, cwd: root },
    );
    await watch.waitForRun((r) => r.revision === first && r.result === 'applied', LOADED);
    // Two heal runs of the same revision after the first run.
    await watch.waitForRun(
      (r) => r.revision === first && r.trigger === 'heal' && Number(r.runId.slice(4)) >= 3,
      LOADED,
    );
    const once = warningLines(watch).filter((l) => l.revision === first);
    expect(once).toHaveLength(1);
    expect(once[0]).toMatchObject({ level: 'warn', revision: first });
    expect(String(once[0]?.warning)).toMatch(new RegExp(`^svc/${WARNING.source}`));

    // The pull request moves the file: the same warning, another file, another revision.
    const second = await remote.push({ 'svc/cortex.yaml': null, 'moved/cortex.yaml': warned('warned-svc') });
    await watch.waitForRun((r) => r.revision === second, LOADED);
    const again = warningLines(watch).filter((l) => l.revision === second);
    expect(again).toHaveLength(1);
    expect(String(again[0]?.warning)).toMatch(new RegExp(`^moved/${WARNING.source}`));

    // A revision that changes something else brings the same warning back: it is logged for it.
    const third = await remote.push({ 'other/cortex.yaml': serviceYaml('other-svc') });
    await watch.waitForRun((r) => r.revision === third && r.result === 'applied', LOADED);
    expect(warningLines(watch).filter((l) => l.revision === third)).toHaveLength(1);
  }, 180_000);
});

describe('each run names what it changed', () => {
  it('a change names the object it updated, in the log line and on /status', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, {
      'cortex-sync.yaml': CONFIG_YAML,
      'a/cortex.yaml': serviceYaml('alpha-svc'),
      'b/cortex.yaml': serviceYaml('beta-svc'),
    });
    watch = await startWatch({ dir: manifests, healInterval: 0 }, { emulator, cwd: root });
    const created = await watch.waitForRun((r) => r.result === 'applied');
    expect((created as { changed?: unknown }).changed).toEqual({
      created: { count: 2, first: ['entity/alpha-svc', 'entity/beta-svc'] },
    });

    await writeFiles(manifests, { 'b/cortex.yaml': serviceYaml('beta-svc', 'Beta, renamed') });
    const updated = await watch.waitForRun((r) => r.trigger === 'file-change' && r.result === 'applied');
    expect((updated as { changed?: unknown }).changed).toEqual({ updated: { count: 1, first: ['entity/beta-svc'] } });
    const line = watch.logs().find((l) => l.runId === updated.runId && l.msg === 'run applied changes');
    expect(line?.changed).toEqual({ updated: { count: 1, first: ['entity/beta-svc'] } });
    expect(entityTitle(emulator, 'beta-svc')).toBe('Beta, renamed');
  });

  it('a heal run names what it put back as healed', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, { 'cortex-sync.yaml': CONFIG_YAML, 'a/cortex.yaml': serviceYaml('drift-svc') });
    watch = await startWatch({ dir: manifests, healInterval: 300 }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied');
    // Someone edits the entity in the UI.
    const edited = await fetch(`${emulator.url}/api/v1/open-api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
      body: serviceYaml('drift-svc', 'Edited in the UI'),
    });
    expect(edited.ok).toBe(true);
    const healed = await watch.waitForRun(
      (r) => r.trigger === 'heal' && (r as { changed?: unknown }).changed !== undefined,
    );
    expect((healed as { changed?: unknown }).changed).toEqual({ healed: { count: 1, first: ['entity/drift-svc'] } });
    expect(entityTitle(emulator, 'drift-svc')).toBe('drift-svc');
  });

  it('names are escaped: an Initiative named with ANSI escapes prints as \\x1b, never as an escape', async () => {
    const manifests = join(root, 'manifests');
    const name = '\u001b[31mRED\u001b[0m readiness';
    await writeFiles(manifests, {
      'cortex-sync.yaml': CONFIG_YAML,
      '.cortex/scorecards/ready.yaml': [
        'tag: ready',
        'name: Ready',
        'ladder:',
        '  levels:',
        '    - {name: Gold, rank: 1, color: "#FFD700"}',
        'rules:',
        '  - {title: Has git, expression: git != null, level: Gold}',
        '',
      ].join('\n'),
      '.cortex/initiatives/red.yaml': `name: "\\e[31mRED\\e[0m readiness"\nscorecardTag: ready\ntargetDate: "2099-12-31"\nisDraft: false\nemphasizedLevels: [{rank: 1}]\n`,
    });
    watch = await startWatch({ dir: manifests, healInterval: 0 }, { emulator, cwd: root });
    const run = await watch.waitForRun((r) => r.result === 'applied');
    const changed = (run as { changed?: { created?: { first: string[] } } }).changed;
    expect(changed?.created?.first).toContain('initiative/\\x1b[31mRED\\x1b[0m readiness');
    const line = watch.logs().find((l) => l.runId === run.runId && l.msg === 'run applied changes');
    expect(JSON.stringify(line)).not.toContain(name);
    expect(JSON.stringify(line)).not.toContain('\\u001b');
  });
});

describe('strict: true in cortex-sync.yaml', () => {
  it('makes the warning an error: the run is invalid, names it with file:line, and writes nothing', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, {
      'cortex-sync.yaml': `${CONFIG_YAML}strict: true\n`,
      'svc/cortex.yaml': warned('strict-svc'),
    });
    const before = emulator.requests.length;
    watch = await startWatch({ dir: manifests, healInterval: 0 }, { emulator, cwd: root });
    const run = await watch.waitForRun((r) => r.result === 'invalid');
    expect(run.errors.join('\n')).toMatch(/svc\/cortex\.yaml:6:3: .*strict mode makes it an error/);
    expect(writesSince(emulator, before)).toEqual([]);
  });

  it('--no-strict (the operator) beats the file; --strict without a file makes it an error too', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, {
      'cortex-sync.yaml': `${CONFIG_YAML}strict: true\n`,
      'svc/cortex.yaml': warned('lenient-svc'),
    });
    watch = await startWatch({ dir: manifests, healInterval: 0, strict: false }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'applied');
    expect(await watch.stop()).toBe(0);

    await writeFiles(manifests, {
      'cortex-sync.yaml': CONFIG_YAML,
      'svc/cortex.yaml': warned('lenient-svc', 'Changed'),
    });
    const before = emulator.requests.length;
    watch = await startWatch({ dir: manifests, healInterval: 0, strict: true }, { emulator, cwd: root });
    await watch.waitForRun((r) => r.result === 'invalid');
    expect(writesSince(emulator, before)).toEqual([]);
  });
});
