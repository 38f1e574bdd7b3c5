/**
 * Test harness for `watch`: the command in-process (its real code path, stdout captured) against
 * the emulator on 127.0.0.1, with a bare git repository in a temp directory as the remote.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { startEmulator } from '../../packages/emulator/src/server.js';
import type { WatchFlags } from '../../src/watch/command.js';
import { runWatch } from '../../src/watch/run-command.js';

export const API_KEY = 'watch-test-key-0123456789abcdef';
export const WEBHOOK_SECRET = 'watch-test-webhook-secret';

export type Emulator = Awaited<ReturnType<typeof startEmulator>>;

export const startTestEmulator = (options: Parameters<typeof startEmulator>[0] = {}): Promise<Emulator> =>
  startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0, ...options });

export const tempDir = (prefix = 'cortex-sync-watch-'): Promise<string> => mkdtemp(join(tmpdir(), prefix));
export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

export const writeFiles = async (root: string, files: Record<string, string | null>): Promise<void> => {
  for (const [path, text] of Object.entries(files)) {
    if (text === null) await rm(join(root, path), { force: true });
    else {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  }
};

export const serviceYaml = (tag: string, title = tag): string =>
  `openapi: 3.0.1\ninfo:\n  title: ${title}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n`;

export const CONFIG_YAML = 'sourceId: watch-test\n';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

/** A bare repository (`file://` URL) with a working clone to commit and push from. */
export interface TestRemote {
  url: string;
  /** Writes (or, with `null`, deletes) files, commits and pushes to `main`; returns the commit. */
  push(files: Record<string, string | null>, message?: string): Promise<string>;
}

export const createRemote = async (root: string): Promise<TestRemote> => {
  const bare = join(root, 'remote.git');
  const work = join(root, 'work');
  await mkdir(bare, { recursive: true });
  await mkdir(work, { recursive: true });
  git(bare, 'init', '--bare', '--initial-branch=main');
  git(work, 'init', '--initial-branch=main');
  git(work, 'remote', 'add', 'origin', bare);
  return {
    url: `file://${bare}`,
    push: async (files, message = 'change') => {
      await writeFiles(work, files);
      git(work, 'add', '--all');
      git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
      git(work, 'push', '--quiet', 'origin', 'HEAD:refs/heads/main');
      return git(work, 'rev-parse', 'HEAD');
    },
  };
};

export interface StatusRun {
  runId: string;
  trigger: string;
  revision?: string;
  result: string;
  reason?: string;
  summary?: Record<string, number>;
  writes?: number;
  errors: string[];
}

export interface RunningWatch {
  url: string;
  logs(): Record<string, unknown>[];
  status(): Promise<{ runs: StatusRun[]; appliedRevision: string | null }>;
  /** Waits until a run matching `predicate` is in `/status` (newest first); fails after `timeoutMs`. */
  waitForRun(predicate: (run: StatusRun) => boolean, timeoutMs?: number): Promise<StatusRun>;
  /** Asks it to stop as SIGTERM would; resolves with the exit code. */
  stop(): Promise<number>;
}

export const defaultFlags = (): WatchFlags => ({
  listen: '127.0.0.1:0',
  interval: 0,
  healInterval: 0,
  shutdownTimeout: 5000,
  backoff: 50,
});

export const startWatch = async (
  flags: Partial<WatchFlags>,
  options: { emulator: Emulator; cwd: string; env?: NodeJS.ProcessEnv },
): Promise<RunningWatch> => {
  let text = '';
  let stopRequested!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stopRequested = resolve;
  });
  let announced!: (url: string) => void;
  const listening = new Promise<string>((resolve) => {
    announced = resolve;
  });
  const stdout = new Writable({
    write(chunk: Buffer, _enc, callback) {
      text += chunk.toString('utf8');
      // The first line, or after the lines a replica logs before it listens (`--leader-elect`).
      const first = /^listening on (\S+)$/m.exec(text);
      if (first?.[1]) announced(first[1]);
      callback();
    },
  });
  const env: NodeJS.ProcessEnv = {
    CORTEX_API_KEY: API_KEY,
    CORTEX_BASE_URL: options.emulator.url,
    CORTEX_SYNC_CACHE_DIR: join(options.cwd, 'cache'),
    ...options.env,
  };
  const exit = runWatch(
    { ...defaultFlags(), ...flags },
    { stdout, stderr: stdout, env, cwd: options.cwd, untilStopped: () => stopped },
  );
  const url = await Promise.race([
    listening,
    exit.then((code) => Promise.reject(new Error(`watch exited ${code}: ${text}`))),
  ]);
  const status = async () =>
    (await (await fetch(`${url}/status`)).json()) as Awaited<ReturnType<RunningWatch['status']>>;
  return {
    url,
    logs: () =>
      text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    status,
    waitForRun: async (predicate, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = (await status()).runs.find(predicate);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`no such run within ${timeoutMs} ms: ${JSON.stringify(await status())}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    stop: async () => {
      stopRequested();
      return exit;
    },
  };
};

export const entityTitle = (emulator: Emulator, tag: string): string | undefined => {
  const id = emulator.state.entities.idByTag[tag];
  const info = id ? emulator.state.entities.byId[id]?.descriptor.info : undefined;
  return info && typeof info === 'object' && !Array.isArray(info)
    ? String((info as { title?: unknown }).title)
    : undefined;
};

export const writesSince = (emulator: Emulator, from: number) =>
  emulator.requests.slice(from).filter((r) => r.method !== 'GET');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
