import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { VERSION } from '../../src/version.js';
import {
  ANSI,
  API_KEY,
  cli,
  closedPort,
  removeDir,
  serviceYaml,
  startTestEmulator,
  tempDir,
  writeFiles,
} from './run.js';

const SOURCE = { CORTEX_SYNC_SOURCE_ID: 'cli-tests' };
const STACK_LINE = /^\s+at /m;

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

/** A repository with one service; `extra` goes under its `info`. */
const oneService = (tag: string, extra = '') => writeFiles(dir, { [`${tag}/cortex.yaml`]: serviceYaml(tag, extra) });

describe('help, version and usage errors', () => {
  it('--help lists the commands and exits 0', async () => {
    const run = await cli(['--help'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: cortex-sync');
    for (const command of ['validate', 'plan', 'apply', 'emulator']) expect(run.stdout).toContain(command);
  });

  it('--help lists the environment variables with their defaults, and what the key must be allowed to do', async () => {
    const run = await cli(['--help'], { cwd: dir });
    for (const name of ['CORTEX_API_KEY', 'CORTEX_BASE_URL', 'CORTEX_SYNC_SOURCE_ID', 'CORTEX_RATE_LIMIT', 'NO_COLOR'])
      expect(run.stdout).toContain(name);
    expect(run.stdout).toContain('(default https://api.getcortexapp.com)');
    expect(run.stdout).toMatch(/What the API key must be allowed to do[^\n]*\n\s+validate, webhook-route\s+nothing/);
    // The README's least-privilege table (test/e2e/least-privilege.test.ts), by the API's names.
    expect(run.stdout).toMatch(/^\s+plan, apply --dry-run\s+EDIT_ENTITY_TYPES .*READ_ONLY key cannot plan/ms);
    for (const name of [
      'VIEW_CATALOGS',
      'VIEW_INITIATIVES',
      'EDIT_CATALOGS',
      'CONFIGURE_SCAFFOLDER',
      'ARCHIVE_ENTITIES',
    ])
      expect(run.stdout).toContain(name);
    expect(run.stdout).toMatch(/^\s+export\s+the same as plan/m);
    expect(run.stdout).toMatch(/^\s+watch\s+apply's/m);
  });

  it('plan --help describes its options and exits 0', async () => {
    const run = await cli(['plan', '--help'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--detailed-exitcode');
    expect(run.stdout).toContain('--output <format>');
  });

  it('--version prints the version and exits 0', async () => {
    const run = await cli(['--version'], { cwd: dir });
    expect(run).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it.each([
    [['frobnicate'], "unknown command 'frobnicate'"],
    [['plan', '--frob'], "unknown option '--frob'"],
    [['plan', '--output', 'yaml'], "argument 'yaml' is invalid"],
    [['apply', '--concurrency', '0'], 'expected a whole number'],
    [['emulator', '--port', '70000'], 'expected a port number'],
    [['emulator', '--missing-definition', 'maybe'], "argument 'maybe' is invalid"],
  ])('%j exits 1 with commander’s message on stderr', async (args, message) => {
    const run = await cli(args, { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });
});

describe('validate --output json', () => {
  it('valid manifests: {valid: true, files, objects, diagnostics} on stdout, exit 0', async () => {
    await oneService('payments');
    await oneService('ledger');
    const run = await cli(['validate', '--output', 'json'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ valid: true, files: 2, objects: 2, diagnostics: [] });
  });

  it('invalid manifests: valid false with located diagnostics, exit 1, nothing but JSON on stdout', async () => {
    await oneService('payments');
    await writeFiles(dir, { 'broken/cortex.yaml': 'openapi: 3.0.1\ninfo:\n  title: no tag\n' });
    const run = await cli(['validate', '--output', 'json'], { cwd: dir });
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout) as { valid: boolean; files: number; diagnostics: unknown[] };
    expect(result).toMatchObject({ valid: false, files: 2 });
    expect(result.diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'error', file: 'broken/cortex.yaml', line: expect.any(Number) }),
    );
  });
});

describe('configuration errors', () => {
  it('a bad key in cortex-sync.yaml: plan and validate exit 1 naming the file and line, with no request sent', async () => {
    await oneService('payments');
    await writeFiles(dir, { 'cortex-sync.yaml': 'sourceId: x\nprnue: true\n' });
    const before = emulator.requests.length;
    const plan = await cli(['plan'], { cwd: dir, emulator });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toMatch(/^cortex-sync\.yaml:2(:\d+)?: error: .*prnue/m);
    expect(emulator.requests.length).toBe(before);
    const validate = await cli(['validate'], { cwd: dir });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/cortex-sync\.yaml:2(:\d+)?: error: /);
  });

  it('plan without CORTEX_API_KEY: exit 1, one clear line, no stack trace', async () => {
    await oneService('payments');
    const run = await cli(['plan'], { cwd: dir, env: SOURCE });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'error: CORTEX_API_KEY (or CORTEX_API_KEY_FILE) is not set: plan and apply read the live workspace\n',
    );
    expect(run.stdout).toBe('');
  });

  it('--debug adds the stack trace, before or after the command', async () => {
    await oneService('payments');
    for (const args of [
      ['--debug', 'plan'],
      ['plan', '--debug'],
    ]) {
      const run = await cli(args, { cwd: dir, env: SOURCE });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(/^error: CORTEX_API_KEY \(or CORTEX_API_KEY_FILE\) is not set/);
      expect(run.stderr, args.join(' ')).toMatch(STACK_LINE);
    }
  });

  it('a bad environment setting: exit 1 naming the variable, not an internal error', async () => {
    await oneService('payments');
    const run = await cli(['plan'], { cwd: dir, emulator, env: { ...SOURCE, CORTEX_SYNC_CONCURRENCY: '0' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: CORTEX_SYNC_CONCURRENCY: expected a whole number/);
    expect(run.stderr).not.toContain('internal error');
  });

  it('no source id (no setting, no git remote): plan works, --prune exits 1 saying how to set one', async () => {
    await oneService('payments');
    const plan = await cli(['plan'], { cwd: dir, emulator });
    expect(plan.code).toBe(0);
    const prune = await cli(['plan', '--prune'], { cwd: dir, emulator });
    expect(prune.code).toBe(1);
    expect(prune.stdout + prune.stderr).toMatch(/--prune needs a source id.*`sourceId` in cortex-sync\.yaml/);
    expect(prune.stderr).not.toMatch(STACK_LINE);
  });

  it('an unreachable API: exit 1 with one network-error line naming the operation, never the key', async () => {
    await oneService('payments');
    const port = await closedPort();
    const run = await cli(['plan'], {
      cwd: dir,
      env: { ...SOURCE, CORTEX_BASE_URL: `http://127.0.0.1:${port}`, CORTEX_API_KEY: API_KEY },
    });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: .+ failed: GET \/api\/v1\/\S+ → network error/);
    // …and the host it was waiting for.
    expect(lines[0]).toContain(`no answer from 127.0.0.1:${port} to GET /api/v1/`);
    expect(run.stderr).not.toContain(API_KEY);
    expect(run.stderr).not.toContain('internal error');
  });
});

describe('plan output', () => {
  it('--output json prints only the plan JSON on stdout; warnings go to stderr', async () => {
    await oneService('json-plan-svc', '  x-cortex-description: dropped\n');
    const run = await cli(['plan', '--output', 'json'], { cwd: dir, emulator, env: SOURCE });
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout) as { formatVersion: number; summary: { create: number }; changes: unknown[] };
    expect(plan.formatVersion).toBe(1);
    expect(plan.summary.create).toBe(1);
    expect(plan.changes).toContainEqual(
      expect.objectContaining({ kind: 'entity', id: 'json-plan-svc', action: 'create' }),
    );
    expect(run.stderr).toMatch(/json-plan-svc\/cortex\.yaml:\d+:\d+: warning: .*x-cortex-description/);
  });

  it('apply --dry-run --output json: also only JSON on stdout, and nothing written', async () => {
    await oneService('dry-run-svc');
    const before = emulator.requests.length;
    const run = await cli(['apply', '--dry-run', '--output', 'json'], { cwd: dir, emulator, env: SOURCE });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ summary: { create: 1 } });
    expect(emulator.requests.slice(before).every((r) => r.method === 'GET')).toBe(true);
  });

  it('--detailed-exitcode: 2 while there are changes, 0 once applied; without the flag always 0', async () => {
    const env = { CORTEX_SYNC_SOURCE_ID: 'detailed-exitcode' };
    await oneService('exitcode-svc');
    expect((await cli(['plan', '--detailed-exitcode'], { cwd: dir, emulator, env })).code).toBe(2);
    expect((await cli(['plan'], { cwd: dir, emulator, env })).code).toBe(0);
    const apply = await cli(['apply', '--plan-log', 'log.jsonl'], { cwd: dir, emulator, env });
    expect(apply.code).toBe(0);
    expect((await cli(['plan', '--detailed-exitcode'], { cwd: dir, emulator, env })).code).toBe(0);
  });

  it('colour only on a terminal, and never with NO_COLOR', async () => {
    await oneService('colour-svc', '  x-cortex-description: dropped\n');
    const onTty = await cli(['plan'], { cwd: dir, emulator, env: SOURCE, tty: true });
    expect(onTty.code).toBe(0);
    expect(onTty.stdout).toMatch(ANSI);
    expect(onTty.stderr).toMatch(ANSI);

    const noColor = await cli(['plan'], { cwd: dir, emulator, env: { ...SOURCE, NO_COLOR: '1' }, tty: true });
    const piped = await cli(['plan'], { cwd: dir, emulator, env: SOURCE, tty: false });
    for (const run of [noColor, piped]) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('colour-svc');
      expect(run.stdout).not.toMatch(ANSI);
      expect(run.stderr).toContain('x-cortex-description');
      expect(run.stderr).not.toMatch(ANSI);
    }
  });
});

describe('apply', () => {
  it('a plan log that cannot be written: exit 1 naming it, before anything is written to the API', async () => {
    await oneService('plan-log-svc');
    await writeFiles(dir, { 'logs/placeholder': '' });
    const before = emulator.requests.length;
    const run = await cli(['apply', '--plan-log', 'logs'], { cwd: dir, emulator, env: SOURCE });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: cannot open the plan log .*logs/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(emulator.requests.slice(before)).toEqual([]);
  });

  it('apply --output json: the plan and the results as one JSON object on stdout', async () => {
    await oneService('apply-json-svc');
    const run = await cli(['apply', '--output', 'json', '--plan-log', 'log.jsonl'], {
      cwd: dir,
      emulator,
      env: { CORTEX_SYNC_SOURCE_ID: 'apply-json' },
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'applied',
      refused: false,
      summary: { create: 1 },
      changes: expect.arrayContaining([
        expect.objectContaining({ kind: 'entity', id: 'apply-json-svc', action: 'create' }),
      ]) as unknown,
      results: [{ kind: 'entity', id: 'apply-json-svc', action: 'create', outcome: 'ok' }],
      exitCode: 0,
    });
  });
});

/** The values of the emulator's `export NAME=value` lines, in order. */
const exported = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('export '))
    .map((l) => l.slice(l.indexOf('=') + 1));

describe('emulator', () => {
  it('--port 0 prints a working base URL first, then the generated key; stops when asked', async () => {
    let status = 0;
    const run = await cli(['emulator', '--port', '0'], {
      cwd: dir,
      untilStopped: async (stdout) => {
        const [url, key] = exported(stdout());
        const response = await fetch(`${url}/api/v1/catalog/definitions`, {
          headers: { authorization: `Bearer ${key}` },
        });
        status = response.status;
        await response.body?.cancel();
      },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^export CORTEX_BASE_URL=http:\/\/127\.0\.0\.1:\d+\nexport CORTEX_API_KEY=\S{16,}\n$/);
    const [url, key] = exported(run.stdout);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(key).toMatch(/\S{16,}/);
    expect(status).toBe(200);
  });

  it('does not print a key given in CORTEX_API_KEY', async () => {
    const run = await cli(['emulator', '--port', '0'], {
      cwd: dir,
      env: { CORTEX_API_KEY: API_KEY },
      untilStopped: async () => {},
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^export CORTEX_BASE_URL=http:\/\/127\.0\.0\.1:\d+\n#[^\n]*accepted\n$/);
    expect(run.stdout).not.toContain(API_KEY);
  });

  it('--missing-definition: a custom-type entity without a definition, its type schema {}: accepted by default and with allow, refused with refuse', async () => {
    /** Creates a type with an empty schema, then an entity of it without x-cortex-definition; its status. */
    const createWithout = async (args: string[]): Promise<number> => {
      let status = 0;
      const run = await cli(['emulator', '--port', '0', ...args], {
        cwd: dir,
        env: { CORTEX_API_KEY: API_KEY },
        untilStopped: async (stdout) => {
          const [url] = exported(stdout());
          const headers = { authorization: `Bearer ${API_KEY}` };
          const type = await fetch(`${url}/api/v1/catalog/definitions`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ type: 'cli-test-type', name: 'CLI test type', schema: {} }),
          });
          await type.body?.cancel();
          const entity = await fetch(`${url}/api/v1/open-api`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/openapi;charset=UTF-8' },
            body: 'openapi: 3.0.1\ninfo:\n  title: No definition\n  x-cortex-tag: no-def\n  x-cortex-type: cli-test-type\n',
          });
          await entity.body?.cancel();
          status = entity.status;
        },
      });
      expect(run.code).toBe(0);
      return status;
    };
    expect(await createWithout([])).toBe(200);
    expect(await createWithout(['--missing-definition', 'empty-schema'])).toBe(200);
    expect(await createWithout(['--missing-definition', 'refuse'])).toBe(400);
    expect(await createWithout(['--missing-definition', 'allow'])).toBe(200);
  });
});
