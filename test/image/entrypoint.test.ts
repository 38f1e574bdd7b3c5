/**
 * The image's entrypoint as a process, as `docker run IMAGE watch --repo …` starts it: the command
 * line is the Dockerfile's own ENTRYPOINT (read, not copied), its paths inside the image mapped to
 * this checkout's build, run as PID 1 of a PID namespace of its own (`unshare`), as in a container.
 * PID 1 must reap what it did not start: a helper git runs (`ssh`, `git-remote-https`) that leaves
 * a child behind when it exits or is killed leaves that child to PID 1, and Node never waits for
 * it (a zombie per fetch). And a SIGTERM to PID 1 (`docker stop`) stops the watcher cleanly.
 *
 * Needs Linux's `unshare` (user and PID namespaces) and the init binary the ENTRYPOINT names (at
 * that path, or by its name on PATH: `.ci/run` unpacks Debian's `tini` package); without them the
 * PID 1 test is skipped with a note.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, type Emulator, removeDir, startTestEmulator, tempDir } from '../watch/harness.js';
import { execForm, type Instruction, parseDockerfile, readRepoFile, REPO } from './dockerfile.js';

const instructions = parseDockerfile(readRepoFile('Dockerfile'));
const lastStage = Math.max(...instructions.map((i) => i.stage));
const runtime = instructions.filter((i) => i.stage === lastStage);
const only = (keyword: string): Instruction => {
  const found = runtime.filter((i) => i.keyword === keyword);
  expect(found, keyword).toHaveLength(1);
  return found[0] as Instruction;
};
const ENTRYPOINT = execForm(only('ENTRYPOINT').args) ?? [];
const WORKDIR = only('WORKDIR').args;

/** An absolute path inside the image → this checkout (the image's WORKDIR holds the package). */
const inCheckout = (path: string): string =>
  path.startsWith(`${WORKDIR}/`) ? join(REPO, path.slice(WORKDIR.length)) : path;

const onPath = (name: string): string | undefined =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, name))
    .find((file) => existsSync(file));

/** The ENTRYPOINT's executable as found here: at its own path, else by its name on PATH. */
const EXECUTABLE = ENTRYPOINT[0] ?? '';
const FOUND = isAbsolute(EXECUTABLE)
  ? existsSync(EXECUTABLE)
    ? EXECUTABLE
    : onPath(basename(EXECUTABLE))
  : EXECUTABLE; // found on the image's PATH when it starts
const UNSHARE = ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child'];
const canUnshare = process.platform === 'linux' && spawnSync('unshare', [...UNSHARE, 'true']).status === 0;
const runnable = canUnshare && FOUND !== undefined;
if (!runnable)
  console.log(
    `NOTE: the image's entrypoint as PID 1 is not tested here (${canUnshare ? `no ${ENTRYPOINT[0]} here: install tini, or put it on PATH` : 'unshare cannot make user and PID namespaces'})`,
  );

/**
 * A folder for PATH holding what the image links into its PATH (`RUN ln -s /app/… /usr/local/bin/…`),
 * linked to this checkout's files, and this Node.
 */
const imagePath = async (root: string): Promise<string> => {
  const bin = join(root, 'image-bin');
  await mkdir(bin);
  for (const run of runtime.filter((i) => i.keyword === 'RUN'))
    for (const [, target = '', link = ''] of run.args.matchAll(/ln -s (\S+) (\S+)/g))
      await symlink(inCheckout(target), join(bin, basename(link)));
  return [bin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
};

/** The image's ENV, with what a test must not use (its port, its cache folder) replaced. */
const imageEnv = (): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const i of runtime.filter((r) => r.keyword === 'ENV'))
    for (const [, name = '', value = ''] of i.args.matchAll(/(\w+)=(\S+)/g)) env[name] = value;
  return env;
};

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  name: string;
}
/** Every process of this host's /proc, by pid. */
const processes = (): Map<number, Proc> => {
  const all = new Map<number, Proc>();
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const close = stat.lastIndexOf(')');
    const [state = '', ppid = '0'] = stat.slice(close + 2).split(' ');
    all.set(Number(entry), {
      pid: Number(entry),
      ppid: Number(ppid),
      state,
      name: stat.slice(stat.indexOf('(') + 1, close),
    });
  }
  return all;
};
/** The pid a host process has in its own (innermost) PID namespace. */
const namespacePid = (pid: number): string => {
  try {
    return /^NSpid:\s.*?(\d+)\s*$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
  } catch {
    return '';
  }
};
const descendants = (root: number): Proc[] => {
  const all = [...processes().values()];
  const found: Proc[] = [];
  const walk = (pid: number): void => {
    for (const p of all.filter((q) => q.ppid === pid)) {
      found.push(p);
      walk(p.pid);
    }
  };
  walk(root);
  return found;
};

/** What the test waits for now, said when the test ends still waiting (it times out, not this). */
let waitingFor = '';
const until = async <T>(what: () => T | undefined, describe: () => string): Promise<T> => {
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    waitingFor = describe();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

let emulator: Emulator;
let root: string;
let child: ChildProcess | undefined;
beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir('cortex-sync-image-');
});
afterEach(async () => {
  if (child?.exitCode === null) {
    console.error(`ended while waiting for: ${waitingFor}`);
    // PID 1 first (the namespace goes with it), so that unshare is there to reap it.
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    const [pid1] = descendants(child.pid ?? 0);
    if (pid1) process.kill(pid1.pid, 'SIGKILL');
    else child.kill('SIGKILL');
    await exited;
  }
  await emulator.stop();
  await removeDir(root);
});

describe('the image', () => {
  it('runs its command under an init the runtime stage installs', () => {
    expect(ENTRYPOINT.slice(1, 3)).toEqual(['--', 'cortex-sync']);
    const init = ENTRYPOINT[0] ?? '';
    const installs = runtime.filter((i) => i.keyword === 'RUN' && /apt-get install\b/.test(i.args)).map((i) => i.args);
    expect(installs.join(' ')).toMatch(new RegExp(`\\s${basename(init)}(\\s|$)`));
    expect(init).toBe(`/usr/bin/${basename(init)}`); // where Debian's package puts it
  });

  it('is built on one Node, the one the Action runs on (action.yml `runs.using`)', () => {
    const froms = instructions.filter((i) => i.keyword === 'FROM').map((i) => /^node:(\d+)-/.exec(i.args)?.[1]);
    const action = /using:\s*node(\d+)/.exec(readRepoFile('action.yml'))?.[1];
    expect(froms).toEqual([action, action]);
  });

  it.runIf(runnable)(
    'as PID 1: answers /healthz, reaps the orphans of git’s helpers, and stops cleanly on SIGTERM',
    async () => {
      // An `ssh` for git that leaves a child behind: it says its pid, waits for `go`, then exits.
      const pids = join(root, 'orphan-pids');
      const go = join(root, 'go');
      const fakeSsh = join(root, 'fake-ssh');
      const orphan = `echo \\$\\$ >> '${pids}'; while [ ! -e '${go}' ]; do sleep 0.05; done`;
      await writeFile(
        fakeSsh,
        `#!/bin/sh\n( exec sh -c "${orphan}" ) </dev/null >/dev/null 2>&1 &\necho 'no route to host' >&2\nexit 255\n`,
      );
      await chmod(fakeSsh, 0o755);
      const command = [FOUND ?? EXECUTABLE, ...ENTRYPOINT.slice(1)];
      const args = ['watch', '--repo', 'ssh://git.invalid/catalog.git', '--interval', '0'];
      const proc = spawn('unshare', [...UNSHARE, '--', ...command, ...args], {
        cwd: root,
        env: {
          ...imageEnv(),
          PATH: await imagePath(root),
          HOME: root,
          CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
          CORTEX_SYNC_LISTEN: '127.0.0.1:0',
          CORTEX_API_KEY: API_KEY,
          CORTEX_BASE_URL: emulator.url,
          GIT_SSH_COMMAND: fakeSsh,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = proc;
      let out = '';
      proc.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
      proc.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));

      const url = await until(
        () => /^listening on (\S+)$/m.exec(out)?.[1],
        () => `"listening on" in: ${out}`,
      );
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const pid1 = await until(
        () => descendants(proc.pid ?? 0)[0],
        () => 'PID 1 to start',
      );

      // Once the helper exited, its child is PID 1's; when that child exits, PID 1 must reap it.
      const orphans = await until(
        () => {
          const said = existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean) : [];
          const found = descendants(pid1.pid).filter((p) => said.includes(namespacePid(p.pid)));
          return said.length > 0 && found.length === said.length && found.every((p) => p.ppid === pid1.pid)
            ? found
            : undefined;
        },
        () => `git's helper to leave its child to PID 1; output: ${out}`,
      );
      await writeFile(go, '');
      await until(
        () => (orphans.every((o) => !processes().has(o.pid)) ? true : undefined),
        () =>
          `PID 1 to reap ${orphans.map((o) => `pid ${o.pid} (${processes().get(o.pid)?.state ?? 'gone'})`).join(', ')}`,
      );

      process.kill(pid1.pid, 'SIGTERM');
      expect(await exited, out).toBe(0);
    },
    120_000, // a guard against a hang (a zombie never reaped waits forever), not a time limit
  );
});
