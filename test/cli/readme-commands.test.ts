/**
 * Every command the README shows is run by a test as written. The command lines of the README's
 * `sh` blocks are listed below (`COMMANDS`) with the test that runs each; a command block that
 * appears without an entry here fails this file, and so does an entry the README no longer shows.
 *
 * This file runs those no other test runs, each as written by `sh -c`, from a clone of a catalog
 * repository with the package installed as Install leaves it (`node_modules/.bin/cortex-sync`),
 * against local stand-ins: the emulator on 127.0.0.1, a bare git repository in a temp folder for
 * `https://github.com/acme/catalog.git` (git's `url.<base>.insteadOf`, in the run's own HOME), a
 * fake Kubernetes Lease API for `--leader-elect`. The watcher's commands bind where the README says
 * (`0.0.0.0:8080`, `127.0.0.1:8080`), so each runs in a network namespace of its own (`unshare
 * --net`: nothing but its own loopback, so it can bind that port whatever else runs here) joined
 * to the stand-ins by unix sockets (`test/support/netns-bridge.mjs`); each is checked to answer
 * `/readyz`, to apply, and to stop with exit code 0 on SIGTERM. `docker run` is checked against the
 * Dockerfile (its image name, ENTRYPOINT, ENV) and its entrypoint runs as a process with those
 * arguments and that environment, as `test/image/entrypoint.test.ts` runs it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import net from 'node:net';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../packages/emulator/src/server.js';
import { execForm, parseDockerfile, readRepoFile } from '../image/dockerfile.js';
import { bundleCli, ROOT } from '../support/cli-bundle.js';
import { startFakeLeaseApi, type FakeLeaseApi } from '../watch/fake-lease-api.js';
import { createRemote } from '../watch/harness.js';
import { API_KEY, removeDir, serviceYaml, tempDir, writeFiles } from './run.js';

/** A command line of the README: `$ `-prompted lines when a block has them, else every line. */
interface ReadmeCommand {
  command: string;
  line: number;
}

/** The command lines of the README's shell blocks (continuations joined, comments dropped). */
export const readmeCommands = (readme = readFileSync(join(ROOT, 'README.md'), 'utf8')): ReadmeCommand[] => {
  const lines = readme.split('\n');
  const found: ReadmeCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell|console|zsh)$/.test(lines[i] ?? '')) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== '```') end++;
    const block = lines.slice(start, end);
    const prompted = block.some((l) => l.startsWith('$ '));
    let pending: ReadmeCommand | undefined;
    block.forEach((raw, k) => {
      if (prompted && !pending && !raw.startsWith('$ ')) return; // the command's output
      const text = (prompted && !pending ? raw.slice(2) : raw).replace(/\s+#\s.*$/, '').trim();
      const continued = text.endsWith('\\');
      const body = continued ? text.slice(0, -1).trim() : text;
      if (pending) pending.command += ` ${body}`;
      else if (body !== '' && !body.startsWith('#')) pending = { command: body, line: start + k + 1 };
      if (!continued && pending) {
        found.push(pending);
        pending = undefined;
      }
    });
    i = end;
  }
  return found;
};

const USE = 'test/cli/readme-use.test.ts';
const HERE = 'test/cli/readme-commands.test.ts';
const NOT_RUN = 'not run by a test:';

/** Every command line the README shows, and what runs it. */
const COMMANDS: Record<string, string> = {
  // ## Set up
  'npm ci && npm run demo': `${NOT_RUN} .ci/run runs npm ci (and npm run build through prepare); scripts/demo.mjs is not run`,
  'npm test': '.ci/run (the whole suite on Node 24)',
  // ## Install
  'cd cortex-sync && npm ci && npm pack': `${NOT_RUN} .ci/run runs npm ci; scripts/check-package.mjs (test/release/package.test.ts) runs npm pack --dry-run`,
  'cd ../catalog && npm install --save-dev ../cortex-sync/cortex-sync-0.1.0.tgz && npx cortex-sync --help': `${NOT_RUN} installing the tarball needs the npm registry for its dependencies; ${USE} installs the package's layout by hand`,
  // ## Use (the quick start, the commands, saved plans and status)
  'cp -R ../cortex-sync/examples catalog': USE,
  'export CORTEX_API_KEY=…': `${USE} (the test sets the key itself)`,
  'npx --no-install cortex-sync validate --dir catalog/': USE,
  'npx --no-install cortex-sync plan --dir catalog/': USE,
  'npx --no-install cortex-sync apply --dir catalog/': USE,
  'mkdir -p .github/workflows && cp catalog/github-workflow.yml .github/workflows/cortex-sync.yml': USE,
  "mkdir -p catalog/billing && printf 'openapi: 3.0.1\\ninfo:\\n  title: Billing\\n  x-cortex-tag: billing\\n  x-cortex-type: service\\n' > catalog/billing/cortex.yaml":
    USE,
  'npx --no-install cortex-sync plan --dir catalog/ --out plan.json': USE,
  'npx --no-install cortex-sync apply plan.json': USE,
  'npx --no-install cortex-sync status --dir catalog/': USE,
  // ## Adopting an existing workspace
  'npx --no-install cortex-sync export --out catalog/ --source-id acme/catalog': HERE,
  // ## Running the vendor CLI against the emulator
  'export CORTEX_API_KEY=local-key': `${NOT_RUN} the vendor CLI (cortex) is not installed here`,
  'npx cortex-sync emulator --port 8787 &': `${NOT_RUN} the vendor CLI (cortex) is not installed here; test/cli/guidance.test.ts runs \`emulator\``,
  'export CORTEX_BASE_URL=http://127.0.0.1:8787': `${NOT_RUN} the vendor CLI (cortex) is not installed here`,
  'cortex catalog create -f cortex.yaml': `${NOT_RUN} the vendor CLI (cortex) is not installed here`,
  'cortex scorecards create -f scorecard.yaml && cortex initiatives create -f initiative.json': `${NOT_RUN} the vendor CLI (cortex) is not installed here`,
  [`curl -s -X POST -H 'content-type: application/json' $CORTEX_BASE_URL/_emulator/custom-integrations -d '{"name": "deploys", "entityTagJq": ".data.codeTag", "key": "deploy-info"}'`]: `${NOT_RUN} packages/emulator/test/control.test.ts sends the same requests`,
  [`curl -s -X POST -H 'content-type: application/json' "$URL" -d @payload.json`]: `${NOT_RUN} packages/emulator/test/webhook.test.ts sends the same request`,
  [`curl -s -X PUT  -H 'content-type: application/json' $CORTEX_BASE_URL/_emulator/scim-settings -d '{"provisioning": false, "deprovisioning": true}'`]: `${NOT_RUN} packages/emulator/test/control.test.ts sends the same request`,
  [`curl -s -X POST -H 'content-type: application/json' $CORTEX_BASE_URL/_emulator/api-keys -d '{"roles": [{"type": "DEFAULT", "role": "READ_ONLY"}]}'`]: `${NOT_RUN} packages/emulator/test/control.test.ts sends the same request`,
  // ### Testing a webhook mapping offline
  "cortex-sync webhook-route --jq '.data.codeTag' --payload payload.json": HERE,
  // ## Running as a watcher
  'export CORTEX_API_KEY=… CORTEX_SYNC_WEBHOOK_SECRET=…': `${HERE} (the test sets both itself)`,
  'node_modules/.bin/cortex-sync watch --repo https://github.com/acme/catalog.git --branch main --listen 0.0.0.0:8080':
    HERE,
  'node_modules/.bin/cortex-sync watch --dir catalog/': HERE,
  'docker build -t cortex-sync .': `${NOT_RUN} Docker is not installed here; .ci/run lints the Dockerfile, test/image/build-context.test.ts checks its context`,
  'docker run -e CORTEX_API_KEY -p 8080:8080 cortex-sync watch --repo https://github.com/acme/catalog.git': `${HERE} (its entrypoint as a process)`,
  'node_modules/.bin/cortex-sync watch --config sources.yaml --listen 0.0.0.0:8080': HERE,
  'node_modules/.bin/cortex-sync watch --config sources.yaml --leader-elect --lease-namespace cortex': HERE,
  // ## Benchmarks
  'npm run bench': `${NOT_RUN} the benchmark takes minutes; packages/bench/test checks its arithmetic and inputs`,
  'node packages/bench/dist/main.js --sizes 1000 --repeats 1 --apply-entities 500 --out /tmp/r.json': `${NOT_RUN} the benchmark takes minutes; packages/bench/test checks its arithmetic and inputs`,
  // ## Development
  'npm run typecheck': '.ci/run',
  'npm run lint': '.ci/run',
  'npm run format': `${NOT_RUN} it rewrites the files; .ci/run runs lint, which checks what it would change`,
  'npm run build': '.ci/run (npm ci runs it through prepare)',
  'npm run test:fast': `${NOT_RUN} .ci/run runs npm test, which holds the fast project`,
  'npm run test:e2e': '.ci/run (on Node 20 and 22)',
  'npm run check:package': '.ci/run',
  '.ci/run': 'CI itself',
};

describe("the README's commands", () => {
  const shown = readmeCommands();

  it('finds the command lines of every sh block, a `$ ` prompt and continued lines included', () => {
    expect(
      readmeCommands(
        '```sh\n$ a --b\noutput\n```\n```bash\nc \\\n  d   # note\n# only a comment\n```\n```text\ne\n```\n',
      ),
    ).toEqual([
      { command: 'a --b', line: 2 },
      { command: 'c d', line: 6 },
    ]);
    expect(shown.length).toBeGreaterThan(30);
  });

  it('each has an entry saying which test runs it', () => {
    const unknown = shown.map((c) => c.command).filter((c) => COMMANDS[c] === undefined);
    expect(unknown, 'a README command no test runs: run it in a test and list it in COMMANDS').toEqual([]);
  });

  it('each entry is a command the README still shows', () => {
    const commands = new Set(shown.map((c) => c.command));
    expect(Object.keys(COMMANDS).filter((c) => !commands.has(c))).toEqual([]);
  });

  it('a command listed as run by a test file: that file exists; readme-use runs the Use section', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const at = readme.indexOf('\n## Use\n');
    const use = readme.slice(at, readme.indexOf('\n## ', at + 1));
    for (const [command, where] of Object.entries(COMMANDS)) {
      const file = /^(test\/\S+\.test\.ts)/.exec(where)?.[1];
      if (file === undefined) continue;
      expect(existsSync(join(ROOT, file)), file).toBe(true);
      if (file === USE) expect(use, command).toContain(command);
    }
  });
});

/** The commands this file runs (each in a test below); the last test checks it runs all it claims. */
const RUN_HERE: string[] = [];
const runs = (command: string): string => {
  expect(COMMANDS[command]?.startsWith(HERE), command).toBe(true);
  RUN_HERE.push(command);
  return command;
};
const lineOf = (prefix: string): string => {
  const found = readmeCommands().find((c) => c.command.startsWith(prefix));
  if (!found) throw new Error(`the README shows no command starting with ${prefix}`);
  return found.command;
};

// ---------------------------------------------------------------------------------------------
// The stand-ins and the catalog repository

let emulator: RunningEmulator;
let root: string;
let repo: string;
let home: string;

const startTestEmulator = () => startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
const entity = async (tag: string): Promise<{ name?: string } | undefined> => {
  const res = await fetch(`${emulator.url}/api/v1/catalog/${tag}`, { headers: { authorization: `Bearer ${API_KEY}` } });
  return res.status === 404 ? undefined : ((await res.json()) as { name?: string });
};

beforeAll(async () => {
  root = await tempDir();
  home = join(root, 'home');
  await mkdir(home);
  repo = join(root, 'catalog-repo');
  await mkdir(join(repo, '.git'), { recursive: true });
  await writeFile(join(repo, '.git', 'config'), '[remote "origin"]\n\turl = git@github.com:acme/catalog.git\n');
  await writeFile(join(repo, 'package.json'), '{ "name": "catalog-repo", "private": true }\n');
  const entry = await bundleCli(join(repo, 'node_modules', 'cortex-sync'));
  await mkdir(join(repo, 'node_modules', '.bin'));
  await symlink(entry, join(repo, 'node_modules', '.bin', 'cortex-sync'));
}, 240_000);
afterAll(async () => removeDir(root));
beforeEach(async () => {
  emulator = await startTestEmulator();
  return () => emulator.stop();
});

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: `${join(repo, 'node_modules', '.bin')}${delimiter}${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
  HOME: home,
  NO_COLOR: '1',
  npm_config_offline: 'true',
  npm_config_update_notifier: 'false',
  CORTEX_BASE_URL: emulator.url,
  CORTEX_API_KEY: API_KEY,
  CORTEX_SYNC_WEBHOOK_SECRET: 'readme-webhook-secret',
});

/** A one-shot command; no terminal here, as in CI: approved beforehand, as the README says CI must be. */
const sh = (line: string, cwd = repo): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve, reject) => {
    const env = { ...baseEnv(), CORTEX_SYNC_AUTO_APPROVE: 'true' };
    const child = spawn('sh', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });

// ---------------------------------------------------------------------------------------------
// One-shot commands

describe('Adopting an existing workspace, as written', () => {
  it('export, then plan and apply take the UI-made objects under management, creating nothing', async () => {
    const exportLine = runs(lineOf('npx --no-install cortex-sync export '));
    const made = await fetch(`${emulator.url}/api/v1/open-api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/openapi;charset=UTF-8' },
      body: serviceYaml('made-in-the-ui'),
    });
    expect(made.status).toBe(200);
    const cwd = join(root, 'adopt');
    await writeFiles(cwd, { '.git/config': '[remote "origin"]\n\turl = git@github.com:acme/catalog.git\n' });
    await symlink(join(repo, 'node_modules'), join(cwd, 'node_modules'));
    const exported = await sh(exportLine, cwd);
    expect(exported.code, exported.output).toBe(0);
    const plan = await sh('npx --no-install cortex-sync plan --dir catalog/', cwd);
    expect(plan.code, plan.output).toBe(0);
    expect(plan.output).toMatch(/0 to create/);
    expect(plan.output).toContain('adopt: exists live, not yet managed');
    const apply = await sh('npx --no-install cortex-sync apply --dir catalog/', cwd);
    expect(apply.code, apply.output).toBe(0);
    const again = await sh('npx --no-install cortex-sync plan --dir catalog/', cwd);
    expect(again.output).toContain('No changes');
  });
});

describe('Testing a webhook mapping offline, as written', () => {
  it('prints the entity the payload goes to, and why, as the README shows', async () => {
    const line = runs(lineOf('cortex-sync webhook-route '));
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const shownOutput = readme.split('\n')[readmeCommands().find((c) => c.command === line)!.line] ?? '';
    const cwd = join(root, 'webhook');
    await writeFiles(cwd, {
      '.cortex/catalog/brain.yaml':
        'openapi: 3.0.1\ninfo:\n  title: Brain\n  x-cortex-tag: brain\n  x-cortex-type: service\n  x-service-custom-integration-mappings: [right-brain]\n',
      'payload.json': '{"data": {"codeTag": "right-brain"}}\n',
    });
    const run = await sh(line, cwd);
    expect(run.code, run.output).toBe(0);
    expect(run.output.trim()).toBe(shownOutput);
  });
});

// ---------------------------------------------------------------------------------------------
// Long-running commands, each in a network namespace of its own

const canUnshare =
  process.platform === 'linux' &&
  spawnSync('unshare', ['--user', '--map-root-user', '--net', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' })
    .status === 0;
if (!canUnshare)
  console.log(
    "NOTE: the README's watcher commands are not run here (unshare cannot make a network namespace, or no `ip`)",
  );

const BRIDGE = join(ROOT, 'test', 'support', 'netns-bridge.mjs');
/** In the namespace: its loopback up, the bridge listening, then the command (`exec`: its pid is the child's). */
const IN_NAMESPACE =
  'ip link set lo up || exit 97; node "$1" "$2" $3 & while [ ! -e "$2/ready" ]; do sleep 0.05; done; shift 3; exec "$@"';

interface Started {
  proc: ChildProcess;
  output: () => string;
  get: (path: string) => Promise<{ status: number; body: string }>;
  /** SIGTERM to the command; resolves with its exit code. */
  stop: () => Promise<number | null>;
}

const started: Started[] = [];
const hostBridges: net.Server[] = [];
afterEach(async () => {
  // Whatever a command left (a failed test's command, the bridge): its whole process group.
  for (const s of started.splice(0)) {
    try {
      process.kill(-(s.proc.pid ?? 0), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await Promise.all(hostBridges.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** The port of a `http://127.0.0.1:PORT` URL. */
const portOf = (url: string): number => Number(new URL(url).port);

/**
 * Starts `argv` (a README line: by `bash -c`, which runs a lone command in its own process, as a
 * supervisor would start it, so that the SIGTERM reaches the command) in a network namespace of its own, with 127.0.0.1:`reach` ports forwarded to the same
 * ports here, and `probe` (its port in there) reachable through `get`.
 */
const startInNamespace = async (
  argv: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; reach: number[]; probe: number },
): Promise<Started> => {
  const dir = await mkdtemp(join(root, 'ns-'));
  for (const port of options.reach) {
    const server = net.createServer((from) => {
      const to = net.connect(port, '127.0.0.1');
      from.on('error', () => to.destroy());
      to.on('error', () => from.destroy());
      from.pipe(to).pipe(from);
    });
    await new Promise<void>((resolve) => server.listen(join(dir, `in-${port}.sock`), resolve));
    hostBridges.push(server);
  }
  const specs = [...options.reach.map((p) => `in:${p}`), `out:${options.probe}`].join(' ');
  const proc = spawn(
    'unshare',
    ['--user', '--map-root-user', '--net', 'sh', '-c', IN_NAMESPACE, 'ns', BRIDGE, dir, specs, ...argv],
    // A process group of its own, for the clean-up; each run its own cache folder (`CORTEX_SYNC_CACHE_DIR`).
    {
      cwd: options.cwd,
      env: { CORTEX_SYNC_CACHE_DIR: join(dir, 'cache'), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const run: Started = {
    proc,
    output: () => out,
    get: (path) =>
      new Promise((resolve, reject) => {
        const req = request({ socketPath: join(dir, `out-${options.probe}.sock`), path }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      }),
    stop: async () => {
      proc.kill('SIGTERM');
      const code = await exited;
      const bridge = Number(await readFile(join(dir, 'ready'), 'utf8').catch(() => ''));
      if (bridge > 0) process.kill(bridge, 'SIGKILL');
      await removeDir(dir);
      return code;
    },
  };
  started.push(run);
  return run;
};

/** Polls `what` every 100 ms; says what it waited for when the test times out. */
const until = async <T>(what: () => Promise<T | undefined>, describe: () => string): Promise<T> => {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = await what().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`waited 90 s for ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** Ready (`/readyz` 200), then `tag` applied with `title`: the command's run reached the API. */
const readyAndApplied = async (run: Started, tag: string, title: string): Promise<void> => {
  await until(
    async () => ((await run.get('/readyz')).status === 200 ? true : undefined),
    () => `/readyz to answer 200; output: ${run.output()}`,
  );
  await until(
    async () => ((await entity(tag))?.name === title ? true : undefined),
    () => `${tag} applied; output: ${run.output()}`,
  );
};

/** The bare repository `https://github.com/acme/catalog.git` stands for, in the run's HOME git config. */
const catalogRemote = async (files: Record<string, string>): Promise<void> => {
  const remote = await createRemote(await mkdtemp(join(root, 'remote-')));
  await remote.push(files);
  await writeFile(
    join(home, '.gitconfig'),
    `[url "${remote.url}"]\n\tinsteadOf = https://github.com/acme/catalog.git\n`,
  );
};

/** The `sources.yaml` block of the README, as written. */
const sourcesYaml = (): string => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /```yaml\n(# sources\.yaml:[\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('the README shows no sources.yaml');
  return block;
};

describe.runIf(canUnshare)(
  'Running as a watcher, as written (each started, ready, applied, stopped by SIGTERM)',
  {
    timeout: 180_000,
  },
  () => {
    it('watch --repo … --branch main --listen 0.0.0.0:8080', async () => {
      const line = runs(lineOf('node_modules/.bin/cortex-sync watch --repo '));
      await catalogRemote({ 'payments/cortex.yaml': serviceYaml('payments', '  description: from git\n') });
      const run = await startInNamespace(['bash', '-c', line], {
        cwd: repo,
        env: baseEnv(),
        reach: [portOf(emulator.url)],
        probe: 8080,
      });
      await readyAndApplied(run, 'payments', 'payments');
      expect(run.output()).toMatch(/^listening on http:\/\/0\.0\.0\.0:8080$/m);
      expect(await run.stop(), run.output()).toBe(0);
    });

    it('watch --dir catalog/ (on 127.0.0.1:8080)', async () => {
      const line = runs(lineOf('node_modules/.bin/cortex-sync watch --dir '));
      await writeFiles(repo, { 'catalog/dev/cortex.yaml': serviceYaml('dev-svc') });
      const run = await startInNamespace(['bash', '-c', line], {
        cwd: repo,
        env: baseEnv(),
        reach: [portOf(emulator.url)],
        probe: 8080,
      });
      await readyAndApplied(run, 'dev-svc', 'dev-svc');
      expect(run.output()).toMatch(/^listening on http:\/\/127\.0\.0\.1:8080$/m);
      expect(await run.stop(), run.output()).toBe(0);
    });

    it('watch --config sources.yaml --listen 0.0.0.0:8080, with the README’s sources.yaml', async () => {
      const line = runs(lineOf('node_modules/.bin/cortex-sync watch --config sources.yaml --listen '));
      await catalogRemote({ 'catalog/platform/cortex.yaml': serviceYaml('platform-svc') });
      await writeFile(join(repo, 'sources.yaml'), sourcesYaml());
      const run = await startInNamespace(['bash', '-c', line], {
        cwd: repo,
        env: baseEnv(),
        reach: [portOf(emulator.url)],
        probe: 8080,
      });
      await readyAndApplied(run, 'platform-svc', 'platform-svc');
      const status = JSON.parse((await run.get('/status')).body) as { sources: Record<string, unknown> };
      expect(Object.keys(status.sources)).toEqual(['platform']);
      expect(await run.stop(), run.output()).toBe(0);
    });

    it('watch --config sources.yaml --leader-elect --lease-namespace cortex, against a fake Lease API', async () => {
      const line = runs(lineOf('node_modules/.bin/cortex-sync watch --config sources.yaml --leader-elect '));
      const leases: FakeLeaseApi = await startFakeLeaseApi();
      try {
        await catalogRemote({ 'catalog/platform/cortex.yaml': serviceYaml('replica-svc') });
        await writeFile(join(repo, 'sources.yaml'), sourcesYaml());
        const kubeconfig = join(root, 'kubeconfig');
        await leases.kubeconfig(kubeconfig, 'token-readme');
        const run = await startInNamespace(['bash', '-c', line], {
          cwd: repo,
          env: { ...baseEnv(), KUBECONFIG: kubeconfig },
          reach: [portOf(emulator.url), portOf(leases.url)],
          probe: 8080,
        });
        await readyAndApplied(run, 'replica-svc', 'replica-svc');
        expect(leases.lease('cortex', 'cortex-sync')?.spec.holderIdentity).toBeTruthy();
        expect(await run.stop(), run.output()).toBe(0);
      } finally {
        await leases.stop();
      }
    });

    it('docker run -e CORTEX_API_KEY -p 8080:8080 cortex-sync watch --repo …: the image’s entrypoint with those arguments', async () => {
      const line = runs(lineOf('docker run '));
      const instructions = parseDockerfile(readRepoFile('Dockerfile'));
      const lastStage = Math.max(...instructions.map((i) => i.stage));
      const runtime = instructions.filter((i) => i.stage === lastStage);
      const entrypoint = execForm(runtime.find((i) => i.keyword === 'ENTRYPOINT')?.args ?? '') ?? [];
      const workdir = runtime.find((i) => i.keyword === 'WORKDIR')?.args ?? '';
      const imageEnv: Record<string, string> = {};
      for (const i of runtime.filter((r) => r.keyword === 'ENV'))
        for (const [, name = '', value = ''] of i.args.matchAll(/(\w+)=(\S+)/g)) imageEnv[name] = value;

      // The command as docker reads it: options, the image (the one `docker build -t` names), its arguments.
      const words = line.split(/\s+/);
      expect(words.slice(0, 2)).toEqual(['docker', 'run']);
      const image = words.indexOf('cortex-sync');
      expect(lineOf('docker build ')).toContain(`-t ${words[image]} `);
      const options = words.slice(2, image);
      const args = words.slice(image + 1);
      expect(options).toEqual(['-e', 'CORTEX_API_KEY', '-p', '8080:8080']);
      // `-p 8080:8080` publishes the port the image listens on (CORTEX_SYNC_LISTEN), on every interface.
      expect(imageEnv.CORTEX_SYNC_LISTEN).toBe('0.0.0.0:8080');

      // The image's PATH: what it links there, to this checkout's files (its WORKDIR holds the package).
      const bin = join(root, 'image-bin');
      await mkdir(bin, { recursive: true });
      for (const run of runtime.filter((i) => i.keyword === 'RUN'))
        for (const [, target = '', link = ''] of run.args.matchAll(/ln -s (\S+) (\S+)/g))
          await symlink(
            target.startsWith(`${workdir}/`) ? join(ROOT, target.slice(workdir.length)) : target,
            join(bin, basename(link)),
          );
      const path = [bin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
      const onPath = (name: string) =>
        path
          .split(delimiter)
          .map((d) => join(d, name))
          .find((f) => existsSync(f));
      // The init: at its path, else by its name on PATH (.ci/run unpacks Debian's tini); else the command it starts.
      const init = entrypoint[0] ?? '';
      const found = isAbsolute(init) ? (existsSync(init) ? init : onPath(basename(init))) : init;
      expect(entrypoint.slice(1)).toEqual(['--', 'cortex-sync']);
      const command = found ? [found, ...entrypoint.slice(1)] : entrypoint.slice(2);
      if (!found) console.log(`NOTE: ${init} not found: the image's command runs without its init`);

      await catalogRemote({ 'payments/cortex.yaml': serviceYaml('in-the-image') });
      const cache = join(root, 'image-cache');
      await mkdir(cache, { recursive: true });
      const run = await startInNamespace([...command, ...args], {
        cwd: root,
        env: {
          ...imageEnv,
          // The image's HOME and cache folder, here temp folders (its HOME holds the git config).
          HOME: home,
          CORTEX_SYNC_CACHE_DIR: cache,
          PATH: path,
          // `-e CORTEX_API_KEY`: the caller's value; the API is the emulator here.
          CORTEX_API_KEY: API_KEY,
          CORTEX_BASE_URL: emulator.url,
        },
        reach: [portOf(emulator.url)],
        probe: 8080,
      });
      await readyAndApplied(run, 'in-the-image', 'in-the-image');
      expect(run.output()).toMatch(/^listening on http:\/\/0\.0\.0\.0:8080$/m);
      expect(await run.stop(), run.output()).toBe(0);
    });
  },
);

describe('this file', () => {
  it('ran every command its entries say it runs', () => {
    const watcher = /watch|docker run/;
    const claimed = Object.entries(COMMANDS)
      .filter(([, where]) => where.startsWith(HERE) && !/sets? .* itself/.test(where))
      .map(([command]) => command)
      .filter((command) => canUnshare || !watcher.test(command));
    expect([...RUN_HERE].sort()).toEqual(claimed.sort());
  });
});
