/**
 * The CLI as it ships: `bin/cortex-sync.js` running the bundle `npm run build` writes, built here
 * from the sources into a folder laid out as the installed package. Start-up loads a small part of
 * it (commander and the command table); each command's code loads when the command is named, from
 * any working directory, through a symlink, and jq's WebAssembly is found from the bundle's place.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../e2e/harness.js';
import { bundleCli, ROOT } from '../support/cli-bundle.js';
import { cli, writeFiles } from './run.js';

let dir: string;
let bin: string;
let metafile: string;

beforeAll(async () => {
  dir = await tempDir('cortex-sync-bundle-');
  metafile = join(dir, 'meta.json');
  bin = await bundleCli(join(dir, 'package'), { metafile });
}, 120_000);
afterAll(async () => removeDir(dir));

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const run = (
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; entry?: string } = {},
): Promise<Finished> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [options.entry ?? bin, ...args], {
      cwd: options.cwd ?? dir,
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

interface Metafile {
  outputs: Record<
    string,
    {
      bytes: number;
      entryPoint?: string;
      imports: { path: string; kind: string }[];
      inputs: Record<string, { bytesInOutput: number }>;
    }
  >;
}

/** The files Node loads before the first line of the CLI runs: the entry and what it imports statically. */
const startFiles = (meta: Metafile): { files: string[]; bytes: number; inputs: string[] } => {
  const entry = Object.keys(meta.outputs).find((f) => meta.outputs[f]?.entryPoint === 'src/cli/process.ts');
  const seen = new Set<string>();
  const stack = entry ? [entry] : [];
  for (let file = stack.pop(); file !== undefined; file = stack.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of meta.outputs[file]?.imports ?? [])
      if (i.kind === 'import-statement' && meta.outputs[i.path]) stack.push(i.path);
  }
  const files = [...seen];
  return {
    files,
    bytes: files.reduce((sum, f) => sum + (meta.outputs[f]?.bytes ?? 0), 0),
    inputs: files.flatMap((f) => Object.keys(meta.outputs[f]?.inputs ?? {})),
  };
};

describe('the bundled CLI', () => {
  it('starts by loading commander and the command table only: no other package, no engine, no kind', async () => {
    const start = startFiles(JSON.parse(await readFile(metafile, 'utf8')) as Metafile);
    const packages = new Set(start.inputs.flatMap((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(i)?.[1] ?? []));
    expect([...packages]).toEqual(['commander']);
    expect(
      start.inputs.filter((i) =>
        /^src\/(engine\/(?!api-key|context)|kinds|source\/(?!regular-file|parse-limits)|emulator|watch|export)/.test(i),
      ),
    ).toEqual([]);
    // Commander is about 60 KB of it; the rest is the command table, the help text and the redaction.
    expect(start.bytes).toBeLessThan(150 * 1024);
  });

  it('--help lists every command; --version prints the version; both exit 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['validate', 'plan', 'apply', 'emulator', 'export', 'watch', 'webhook-route'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} \\[options\\] +\\S`, 'm'));
    const version = await run(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) as string });
  });

  it.each([
    ['validate', '--output <format>'],
    ['plan', '--detailed-exitcode'],
    ['apply', '--break-lease'],
    ['emulator', '--missing-definition <mode>'],
    ['export', '--kinds <kinds>'],
    ['watch', '--heal-interval <duration>'],
    ['webhook-route', '--payload <file>'],
  ])('%s --help and `help` of it show its flags (%s)', async (command, flag) => {
    const asFlag = await run([command, '--help']);
    expect(asFlag.code).toBe(0);
    expect(asFlag.stdout).toContain(`Usage: cortex-sync ${command} [options]`);
    expect(asFlag.stdout).toContain(flag);
    expect((await run(['help', command])).stdout).toBe(asFlag.stdout);
  });

  it('an unknown command is an error with exit code 1 and a suggestion', async () => {
    const unknown = await run(['aply', '--dir', '.']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: unknown command 'aply'");
    expect(unknown.stderr).toContain('(Did you mean apply?)');
  });

  it('a bad flag value is refused by the command it belongs to, before anything runs', async () => {
    const bad = await run(['apply', '--concurrency', '100']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "option '--concurrency <n>' argument '100' is invalid. expected a whole number from 1 to 64",
    );
  });

  it('validates from another working directory, through a symlink to bin/', async () => {
    const link = join(dir, 'cortex-sync');
    await symlink(bin, link);
    const result = await run(['validate', '--dir', join(ROOT, 'examples')], { entry: link, cwd: '/' });
    expect(result.stderr).toBe('');
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^OK: \d+ objects in \d+ files\.\n$/) as string,
    });
  });

  it('says what is wrong with bad manifests exactly as the sources do (the bundle keeps zod’s English messages)', async () => {
    const repo = join(dir, 'bad-repo');
    await writeFiles(repo, {
      'cortex.yaml':
        'openapi: 3.0.1\ninfo:\n  title: [a, list]\n  x-cortex-tag: "bad tag!"\n  x-cortex-groups: {a: 1}\n  x-cortex-owners:\n    - type: email\n      email: not-an-email\n',
      '.cortex/catalog-pages/empty.yaml': 'slug: empty\nname: ""\niconTag: ""\nisDraft: maybe\ntype: FILTER\n',
      '.cortex/dependencies/x.yaml': 'callerTag: ""\ndependencies:\n  - tag: x\n    path: ""\n    method: FETCH\n',
    });
    const bundled = await run(['validate', '--dir', repo]);
    const sources = await cli(['validate', '--dir', repo], { cwd: dir, env: { NO_COLOR: '1' } });
    expect(bundled.code).toBe(1);
    expect(bundled.stderr).toMatch(/error: /);
    expect({ code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr }).toEqual(sources);
  });

  it('the emulator it starts evaluates a webhook’s Entity tag JQ with jq’s WebAssembly found from the bundle', async () => {
    const key = 'bundle-test-key-0123456789';
    const child = spawn(process.execPath, [bin, 'emulator', '--port', '0'], {
      cwd: dir,
      env: { PATH: process.env.PATH, CORTEX_API_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          const found = /^export CORTEX_BASE_URL=(\S+)$/m.exec(out)?.[1];
          if (found) resolve(found);
        });
        child.once('exit', (code) => reject(new Error(`the emulator exited ${code}: ${out}`)));
      });
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        });
      const descriptor = { openapi: '3.0.1', info: { title: 'Payments', 'x-cortex-tag': 'payments-api' } };
      expect((await api('/api/v1/open-api', { method: 'POST', body: JSON.stringify(descriptor) })).status).toBe(200);
      const made = await api('/_emulator/custom-integrations', {
        method: 'POST',
        body: JSON.stringify({ name: 'Deploys', entityTagJq: '.data | "\\(.team)-\\(.kind)"', key: 'deploy' }),
      });
      expect(made.status).toBe(200);
      const hook = (await made.json()) as { url: string };
      const payload = { data: { team: 'payments', kind: 'api' } };
      const sent = await fetch(hook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      expect(sent.status, await sent.text()).toBe(200);
      const stored = (await (await api('/api/v1/catalog/payments-api/custom-data')).json()) as unknown[];
      expect(stored).toEqual([expect.objectContaining({ key: 'deploy', value: payload })]);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('says how to build it when the bundle is missing', async () => {
    const unbuilt = join(dir, 'unbuilt', 'bin', 'cortex-sync.js');
    await mkdir(dirname(unbuilt), { recursive: true });
    await copyFile(join(ROOT, 'bin', 'cortex-sync.js'), unbuilt);
    const result = await run(['--help'], { entry: unbuilt });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'cortex-sync is not built here: run `npm run build` in its folder (`npm ci` builds it too).\n',
    );
  });
});
