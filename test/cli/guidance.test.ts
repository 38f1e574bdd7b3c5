/**
 * Errors and hints that tell the user what to do: machine outputs that carry every diagnostic,
 * managed objects whose manifests are gone, a base URL ending in /api/v1, a --dir that is not a
 * folder, an apply that wrote nothing leaving no plan log, and the emulator's own problems.
 */
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { cli, removeDir, serviceYaml, startTestEmulator, tempDir, writeFiles } from './run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startTestEmulator();
});
afterAll(() => emulator.stop());

interface PlanJson {
  status: string;
  refused: boolean;
  diagnostics: { severity: string; code: string; file?: string; line?: number; column?: number }[];
}

describe('machine outputs never hide an error', () => {
  it('a reference error: in the JSON with file, line, column, code and severity, and on top of the Markdown, both saying refused', async () => {
    await writeFiles(dir, {
      'svc/cortex.yaml': serviceYaml('ref-svc', '  x-cortex-dependency:\n    - tag: no-such-service\n'),
    });
    const env = { CORTEX_SYNC_SOURCE_ID: 'ref-errors' };
    const json = await cli(['plan', '--output', 'json'], { cwd: dir, emulator, env });
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as PlanJson;
    expect(doc).toMatchObject({ status: 'refused', refused: true });
    const error = doc.diagnostics.find((d) => d.severity === 'error');
    expect(error).toMatchObject({ file: 'svc/cortex.yaml', line: expect.any(Number) as number });
    expect(error?.code).toBeTruthy();

    const md = await cli(['plan', '--output', 'markdown'], { cwd: dir, emulator, env });
    expect(md.code).toBe(1);
    expect(md.stdout).toContain('**Refused**');
    const firstChange = md.stdout.indexOf('<details>');
    const errorLine = md.stdout.indexOf('- **error** `svc/cortex.yaml');
    expect(errorLine).toBeGreaterThan(0);
    if (firstChange >= 0) expect(errorLine).toBeLessThan(firstChange);

    const text = await cli(['plan'], { cwd: dir, emulator, env });
    expect(text.stdout).toContain('Plan refused');
  });

  it('invalid YAML: JSON and Markdown are still printed, with the located error', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': 'openapi: 3.0.1\ninfo:\n  title: [unclosed\n' });
    const json = await cli(['plan', '--output', 'json'], { cwd: dir, emulator });
    expect(json.code).toBe(1);
    const doc = JSON.parse(json.stdout) as PlanJson;
    expect(doc).toMatchObject({ status: 'invalid', refused: true });
    expect(doc.diagnostics[0]).toMatchObject({ severity: 'error', file: 'svc/cortex.yaml' });
    const md = await cli(['plan', '--output', 'markdown'], { cwd: dir, emulator });
    expect(md.stdout).toContain('**Refused**: the manifests did not load');
    expect(md.stdout).toContain('`svc/cortex.yaml');
  });
});

describe('a YAML syntax error', () => {
  it('one indentation mistake: one error, on the line that is wrong, shown with a caret', async () => {
    await writeFiles(dir, {
      'svc/cortex.yaml':
        'openapi: 3.0.1\ninfo:\n  title: svc\n  x-cortex-tag: svc\n   x-cortex-type: service\n  description: hi\n',
    });
    const run = await cli(['validate'], { cwd: dir });
    expect(run.code).toBe(1);
    const errors = run.stderr.split('\n').filter((l) => l.includes(': error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^svc\/cortex\.yaml:5:4: error: this key is indented more than the key on line 4/);
    expect(run.stderr).toContain('    5 |    x-cortex-type: service\n      |    ^\n');
  });
});

describe('managed objects without a manifest', () => {
  it('plan without --prune names them and says --prune would remove them', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'leftovers' };
    await writeFiles(dir, {
      'a/cortex.yaml': serviceYaml('leftover-a'),
      'b/cortex.yaml': serviceYaml('leftover-b'),
      'c/cortex.yaml': serviceYaml('leftover-c'),
    });
    expect((await cli(['apply', '--plan-log', 'log.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    await removeDir(join(dir, 'b'));
    await removeDir(join(dir, 'c'));
    const run = await cli(['plan'], { cwd: dir, emulator, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      '2 managed objects have no manifest; `--prune` would remove them: entity/leftover-b, entity/leftover-c',
    );
    const json = JSON.parse((await cli(['plan', '--output', 'json'], { cwd: dir, emulator, env })).stdout) as PlanJson;
    expect(json.diagnostics.map((d) => d.code)).toContain('managed-without-manifest');
    // With --prune they are planned for removal instead, and not reported as leftovers.
    const pruning = await cli(['plan', '--prune', '--allow-mass-delete'], { cwd: dir, emulator, env });
    expect(pruning.stderr).not.toContain('managed-without-manifest');
    expect(pruning.stdout).toContain('entity/leftover-b');
  });
});

describe('errors that say what to do', () => {
  it('a base URL ending in /api/v1 is named, with the URL to use instead', async () => {
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('base-url-svc') });
    const run = await cli(['plan'], { cwd: dir, emulator, env: { CORTEX_BASE_URL: `${emulator.url}/api/v1/` } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`ends in /api/v1`);
    expect(run.stderr).toContain(`use ${emulator.url}`);
  });

  it('--dir that does not exist, or is a file, says so', async () => {
    await writeFile(join(dir, 'a-file.yaml'), 'x: 1\n');
    for (const command of ['plan', 'validate']) {
      const missing = await cli([command, '--dir', 'nowhere'], { cwd: dir, emulator });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/--dir .*nowhere does not exist/);
      const file = await cli([command, '--dir', 'a-file.yaml'], { cwd: dir, emulator });
      expect(file.code).toBe(1);
      expect(file.stderr).toMatch(/--dir .*a-file\.yaml is a file, not a folder/);
    }
  });

  it('an apply with nothing to do leaves no plan log; one that wrote keeps it', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'plan-log-empty' };
    await writeFiles(dir, { 'svc/cortex.yaml': serviceYaml('plan-log-empty-svc') });
    expect((await cli(['apply', '--plan-log', 'first.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    expect(existsSync(join(dir, 'first.jsonl'))).toBe(true);
    // Reads made while applying are marked as reads; writes are not.
    const entries = (await readFile(join(dir, 'first.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method: string; read?: boolean });
    expect(entries.some((e) => e.method === 'POST' && e.read === undefined)).toBe(true);
    for (const e of entries) expect(e.read === true).toBe(e.method === 'GET');
    expect((await cli(['apply', '--plan-log', 'second.jsonl'], { cwd: dir, emulator, env })).code).toBe(0);
    expect(existsSync(join(dir, 'second.jsonl'))).toBe(false);
  });
});

describe('the emulator command', () => {
  const emulatorRun = (args: string[]) =>
    cli(['emulator', ...args], {
      cwd: dir,
      env: { CORTEX_API_KEY: 'k7Qz9xW2-guidance-3vTn8pLr' },
      untilStopped: async () => {},
    });

  it('a port in use is reported as such', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const run = await emulatorRun(['--port', String(port)]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(run.stderr).not.toContain('internal error');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a corrupt --data file is named', async () => {
    await writeFile(join(dir, 'state.json'), '{"version": 1, "state": ');
    const run = await emulatorRun(['--data', 'state.json']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/--data .*state\.json is not a readable emulator data file/);
    expect(run.stderr).not.toContain('internal error');
  });

  it('a --data file that cannot be written fails at start', async () => {
    await writeFiles(dir, { 'locked/placeholder': '' });
    await chmod(join(dir, 'locked'), 0o500);
    try {
      const run = await emulatorRun(['--data', 'locked/state.json']);
      // Root may write anywhere: then the emulator starts, and that is right too.
      if (process.getuid?.() === 0) expect(run.code).toBe(0);
      else {
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/--data .*state\.json cannot be written/);
      }
      const folder = await emulatorRun(['--data', 'locked']);
      expect(folder.code).toBe(1);
      expect(folder.stderr).toMatch(/--data .*locked is a folder/);
    } finally {
      await chmod(join(dir, 'locked'), 0o700);
    }
  });

  it('--rate-limit 0 means no limit: 1,200 requests in a row get no 429', async () => {
    let statuses: number[] = [];
    const run = await cli(['emulator', '--rate-limit', '0'], {
      cwd: dir,
      env: { CORTEX_API_KEY: 'k7Qz9xW2-guidance-3vTn8pLr' },
      untilStopped: async (stdout) => {
        const url = /CORTEX_BASE_URL=(\S+)/.exec(stdout())?.[1] ?? '';
        statuses = await Promise.all(
          Array.from({ length: 1200 }, async () => {
            const response = await fetch(`${url}/api/v1/catalog/definitions`, {
              headers: { authorization: 'Bearer emulator-guidance-key' },
            });
            await response.body?.cancel();
            return response.status;
          }),
        );
      },
    });
    expect(run.code).toBe(0);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expect(statuses).toHaveLength(1200);
  });
});
