/**
 * No secret the watcher knows (API key, webhook secret, git token and its header form, a password
 * in the remote URL) reaches any surface: the endpoints, the JSON logs, metrics labels, the run
 * history or the plan log, even when the repository's `cortex-sync.yaml` is a symlink to a file
 * that holds them, and even when a diagnostic message quotes them.
 */
import { readdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/engine/config.js';
import { createLogger } from '../../src/watch/log.js';
import { type RunningWatcher, startWatcher } from '../../src/watch/watcher.js';
import { signBody } from '../../src/watch/webhook.js';
import {
  API_KEY,
  CONFIG_YAML,
  type Emulator,
  removeDir,
  type RunningWatch,
  serviceYaml,
  sleep,
  startTestEmulator,
  startWatch,
  tempDir,
  WEBHOOK_SECRET,
  writeFiles,
} from './harness.js';

const GIT_TOKEN = 'ghp_FAKEtokenZYXWVUTSRQPONMLKJI';
const URL_PASSWORD = 'url-pass-QWERTYUIOPASDF';
const GIT_HEADER = Buffer.from(`x-access-token:${GIT_TOKEN}`).toString('base64');
const SECRETS = { API_KEY, WEBHOOK_SECRET, GIT_TOKEN, GIT_HEADER, URL_PASSWORD };

/** The secrets (any 12-character run of one, in any case) found in `text`. */
const leaks = (text: string): string[] => {
  const lower = text.toLowerCase();
  return Object.entries(SECRETS)
    .filter(([, secret]) => {
      for (let i = 0; i + 12 <= secret.length; i += 1)
        if (lower.includes(secret.slice(i, i + 12).toLowerCase())) return true;
      return false;
    })
    .map(([name]) => name);
};

/** Every surface of a running watcher's port, as text. */
const surfaces = async (url: string): Promise<Record<string, string>> => {
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const get = async (path: string) => (await fetch(`${url}${path}`)).text();
  const post = async (signature: string) =>
    (
      await fetch(`${url}/webhook/github`, {
        method: 'POST',
        headers: { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': signature },
        body,
      })
    ).text();
  return {
    status: await get('/status'),
    readyz: await get('/readyz'),
    healthz: await get('/healthz'),
    metrics: await get('/metrics'),
    notFound: await get('/nothing-here'),
    badWebhook: await post(signBody(body, 'wrong')),
  };
};

let emulator: Emulator;
let root: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(root);
});

describe('secrets on the watcher surfaces', () => {
  let watch: RunningWatch | undefined;
  afterEach(async () => {
    if (watch) expect(await watch.stop()).toBe(0);
    watch = undefined;
  });

  it('a cortex-sync.yaml symlinked to a file holding the key shows the key on no surface', async () => {
    const manifests = join(root, 'manifests');
    await writeFiles(manifests, { '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
    // What /proc/self/environ looks like: NUL-separated, the key within the first 60 characters.
    await writeFiles(root, {
      'outside/environ': `CORTEX_API_KEY=${API_KEY}\0CORTEX_SYNC_GIT_TOKEN=${GIT_TOKEN}\0HOME=/home/app\0`,
    });
    await symlink(join(root, 'outside', 'environ'), join(manifests, 'cortex-sync.yaml'));

    watch = await startWatch(
      { dir: manifests },
      {
        emulator,
        cwd: root,
        env: { CORTEX_SYNC_WEBHOOK_SECRET: WEBHOOK_SECRET, CORTEX_SYNC_GIT_TOKEN: GIT_TOKEN },
      },
    );
    const run = await watch.waitForRun((r) => r.result !== undefined);
    // Whether the loader refuses the symlink or quotes what it read, nothing is applied.
    expect(run.result).toBe('invalid');
    expect(run.errors.join('\n')).toContain('cortex-sync.yaml');

    const seen = await surfaces(watch.url);
    const logs = JSON.stringify(watch.logs());
    const cache = join(root, 'cache');
    const planLogs = await Promise.all(
      (await readdir(cache, { recursive: true }).catch(() => []))
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => readFile(join(cache, f), 'utf8')),
    );
    for (const [surface, text] of Object.entries({ ...seen, logs, planLogs: planLogs.join('\n') })) {
      expect(leaks(text), surface).toEqual([]);
    }
  });
});

describe('secrets quoted by a run', () => {
  let watcher: RunningWatcher | undefined;
  afterEach(async () => {
    await watcher?.stop(5000);
    watcher = undefined;
  });

  it('a diagnostic or an error that quotes every secret is redacted in the history, endpoints, logs and metrics', async () => {
    const dir = join(root, 'repo');
    await writeFiles(dir, { 'cortex-sync.yaml': CONFIG_YAML, '.cortex/catalog/a.yaml': serviceYaml('svc-a') });
    const quoted = `key ${API_KEY} token ${GIT_TOKEN} header ${GIT_HEADER} hook ${WEBHOOK_SECRET} url https://u:${URL_PASSWORD}@git.example/x.git`;
    let step = 0;
    const lines: string[] = [];
    const secrets = [GIT_TOKEN, GIT_HEADER, URL_PASSWORD];
    watcher = await startWatcher({
      source: {
        description: 'a test source',
        sync: async () => {
          step += 1;
          if (step === 3) throw new Error(`git fetch failed: ${quoted}`);
          // A revision is a label of a metric: even a hostile one is redacted there.
          return { dir, revision: `rev-${API_KEY}` };
        },
        watch: async () => {},
        close: async () => {},
      },
      resolveConfig: async (at) => {
        const resolved = await resolveConfig(
          { dir: at },
          { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: API_KEY },
          at,
        );
        if (step === 1) return resolved;
        return {
          config: resolved.config,
          diagnostics: [
            {
              severity: 'error',
              code: 'schema',
              message: `got '${quoted}' \u001b[2J`,
              file: 'cortex-sync.yaml',
              line: 1,
            },
          ],
        };
      },
      apiKey: API_KEY,
      secrets,
      webhookSecret: WEBHOOK_SECRET,
      host: '127.0.0.1',
      port: 0,
      healIntervalMs: 0,
      planLogFile: join(root, 'plan-log.jsonl'),
      logger: createLogger({ write: (l) => lines.push(l), secrets: [API_KEY, WEBHOOK_SECRET, ...secrets] }),
      backoff: { baseMs: 60_000 },
    });
    const waitRuns = async (n: number) => {
      while (watcher && (watcher.history.runs().length < n || watcher.runner.state().running)) await sleep(10);
    };
    await waitRuns(1);
    expect(watcher.history.runs()[0]?.result).toBe('applied');
    watcher.runner.trigger('commit');
    await waitRuns(2);
    watcher.runner.trigger('commit');
    await waitRuns(3);
    const history = watcher.history.runs();
    expect(history.map((r) => r.result)).toEqual(['failed', 'invalid', 'applied']);
    expect(history[1]?.errors[0]).toMatch(/^cortex-sync\.yaml:1: got '.*\[REDACTED\].*' \\x1b\[2J$/);

    const seen = await surfaces(watcher.url);
    expect(seen.metrics).toContain('cortex_sync_applied_revision_info{revision="rev-[REDACTED]"} 1');
    for (const [surface, text] of Object.entries({
      ...seen,
      history: JSON.stringify(history),
      logs: lines.join(''),
    })) {
      expect(leaks(text), surface).toEqual([]);
    }
  });
});
