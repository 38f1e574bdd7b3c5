/**
 * Every surface of the CLI against a hostile repository and an unlucky terminal: the key never
 * printed (plan in every format, diagnostics, the plan log), names with control characters
 * escaped, the confirmation asked whenever stdin is a terminal, and `--no-prune` beating the file.
 * Against the emulator on 127.0.0.1.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { ANSI, API_KEY, cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
let outside: string;
beforeEach(async () => {
  dir = await tempDir();
  outside = await tempDir();
});
afterEach(async () => {
  await removeDir(dir);
  await removeDir(outside);
});

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

/** A service whose title is `title` (any string, quoted as JSON, which YAML reads). */
const titled = (tag: string, title: string): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${JSON.stringify(title)}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n`;

describe('the API key is never printed', () => {
  it('plan in text, markdown and json, with the key in a manifest value', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': titled('leak-plan', `copied ${API_KEY} here`) });
    for (const output of ['text', 'markdown', 'json']) {
      const run = await cli(['plan', '--output', output], {
        cwd: dir,
        emulator,
        env: { CORTEX_SYNC_SOURCE_ID: 'leak-plan' },
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('[REDACTED]');
      expect(run.stdout + run.stderr).not.toContain(API_KEY);
      expect(run.stdout + run.stderr).not.toContain(API_KEY.slice(0, 12));
      if (output === 'json') expect(() => JSON.parse(run.stdout) as unknown).not.toThrow();
    }
  });

  it('diagnostics, with the key in a manifest key, even from validate', async () => {
    await writeFiles(dir, { '.cortex/initiatives/x.yaml': `name: X\n${API_KEY}: 1\n` });
    const run = await cli(['validate'], { cwd: dir, env: { CORTEX_API_KEY: API_KEY } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('[REDACTED]');
    expect(run.stderr).not.toContain(API_KEY.slice(0, 12));
  });

  it('the plan log, with the key as an entity tag', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml(API_KEY) });
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'leak-log' },
    });
    expect(run.code).toBe(0);
    const log = await readFile(join(dir, 'log.jsonl'), 'utf8');
    expect(log).toContain('[REDACTED]');
    expect(log).not.toContain(API_KEY.slice(0, 12));
    expect(run.stdout + run.stderr).not.toContain(API_KEY.slice(0, 12));
  });

  it('a key from CORTEX_API_KEY_FILE is used, and redacted like the variable', async () => {
    await writeFile(join(outside, 'api-key'), `${API_KEY}\n`);
    await writeFiles(dir, { 'svc/cortex.yaml': titled('key-file', API_KEY) });
    const run = await cli(['plan'], {
      cwd: dir,
      env: {
        CORTEX_BASE_URL: emulator.url,
        CORTEX_API_KEY_FILE: join(outside, 'api-key'),
        CORTEX_SYNC_SOURCE_ID: 'key-file',
      },
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('+ create entity/key-file');
    expect(run.stdout).not.toContain(API_KEY.slice(0, 12));
  });
});

describe('names with control characters', () => {
  const hostile = 'Readiness\n::error file=.github/workflows/deploy.yml,line=3::boom\u001b[2K\u001b[1A\u202e';
  const fileName = 'svc/evil\n::warning::x\u001b[1A/cortex.yaml';

  it('the text and markdown plans escape them; JSON keeps them exact', async () => {
    await writeFiles(dir, { [fileName]: titled('ctl-names', hostile) });
    const env = { CORTEX_SYNC_SOURCE_ID: 'ctl-names' };
    for (const output of ['text', 'markdown']) {
      const run = await cli(['plan', '--output', output], { cwd: dir, emulator, env });
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(/^\s*::(error|warning)/m);
      expect(run.stdout).not.toMatch(ANSI);
      expect(run.stdout).not.toContain('\u202e');
      expect(run.stdout).toContain('Readiness\\n::error');
      expect(run.stdout).toContain('evil\\n::warning::x\\x1b[1A');
    }
    const json = await cli(['plan', '--output', 'json'], { cwd: dir, emulator, env });
    const plan = JSON.parse(json.stdout) as {
      changes: { kind: string; source?: string; diff: { after?: unknown }[] }[];
    };
    const entity = plan.changes.find((c) => c.kind === 'entity');
    expect(entity?.source).toBe(fileName);
    expect(entity?.diff.some((d) => d.after === hostile)).toBe(true);
  });

  it('diagnostics escape the file name and the message', async () => {
    await writeFiles(dir, {
      [`.cortex/initiatives/bad\n::error::x\u001b[2K.yaml`]: 'name: X\n"k\u001b[2K\\n::error::y": 1\n',
    });
    const run = await cli(['validate'], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/^::error/m);
    expect(run.stderr).not.toMatch(ANSI);
    expect(run.stderr).toContain('bad\\n::error::x\\x1b[2K.yaml');
  });
});

describe('the confirmation is asked whenever stdin is a terminal', () => {
  it('apply 2>&1 | tee: stdin a terminal, stderr a pipe → asked on the terminal; "no" writes nothing', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('tee-no') });
    const terminal = { text: '', opened: 0 };
    const run = await cli(['apply'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'tee-no' },
      tty: { stdin: true },
      input: 'no\n',
      terminal,
    });
    expect(run.code).toBe(1);
    expect(terminal.text).toContain("Only 'yes' will be accepted");
    expect(run.stderr).not.toContain("Only 'yes'");
    // Nothing was applied: the next plan still creates the service.
    const after = await cli(['plan', '--output', 'json'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'tee-no' },
    });
    expect(JSON.parse(after.stdout)).toMatchObject({ summary: { create: 1 } });
  });

  it('no terminal to open: the question goes to stderr, and "yes" applies', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('tee-yes') });
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'tee-yes' },
      tty: { stdin: true },
      input: 'yes\n',
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("Only 'yes' will be accepted");
  });

  it('stdin not a terminal (CI, a pipe): not asked, even with stderr a terminal', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('ci-run') });
    const terminal = { text: '', opened: 0 };
    const run = await cli(['apply', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'ci-run', NO_COLOR: '1' },
      tty: { stderr: true },
      terminal,
    });
    expect(run.code).toBe(0);
    expect(terminal.opened).toBe(0);
    expect(run.stderr).not.toContain("Only 'yes'");
  });
});

describe('--no-prune', () => {
  it('beats prune: true in cortex-sync.yaml', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'no-prune-flag' };
    await writeFiles(dir, {
      'cortex-sync.yaml': 'prune: true\n',
      'a/cortex.yaml': serviceYaml('no-prune-a'),
      'b/cortex.yaml': serviceYaml('no-prune-b'),
      'c/cortex.yaml': serviceYaml('no-prune-c'),
      'd/cortex.yaml': serviceYaml('no-prune-d'),
      'e/cortex.yaml': serviceYaml('no-prune-e'),
    });
    expect((await cli(['apply', '--plan-log', 'log.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    await removeDir(join(dir, 'e'));
    const pruning = await cli(['plan', '--output', 'json'], { cwd: dir, emulator, env });
    expect((JSON.parse(pruning.stdout) as { summary: { archive: number } }).summary.archive).toBe(1);
    const run = await cli(['plan', '--no-prune', '--output', 'json'], { cwd: dir, emulator, env });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { summary: { archive: number } }).summary.archive).toBe(0);
  });
});
