/**
 * The flags of `cortex-sync watch`, defined when the command is named (`src/cli/main.ts`); its
 * action imports `run-command.ts`, which starts the watcher. Durations and the listen address are
 * checked as commander parses them, so a bad value is an error naming the flag.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { SETTINGS } from '../engine/settings.js';
import type { CliIo } from '../runtime-io/io.js';
import { addSettingOptions } from '../runtime-io/setting-options.js';
import { DurationError, formatDuration, parseDuration } from './duration.js';
import { DEFAULT_LISTEN, ListenSyntaxError, parseListen } from './listen.js';
import { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';
import { DEFAULT_ELECTION_TIMING, DEFAULT_LEASE_NAME } from './leader.js';
import { DEFAULT_PLAN_LOG_KEEP, DEFAULT_PLAN_LOG_MAX_BYTES, parseSize } from './plan-log-rotation.js';

export interface WatchFlags {
  repo?: string;
  branch?: string;
  path?: string;
  dir?: string;
  /** Default: `CORTEX_SYNC_LISTEN`, else 127.0.0.1:8080. */
  listen?: string;
  /** Comma-separated DNS names the read endpoints answer on (default: `CORTEX_SYNC_ALLOWED_HOSTS`). */
  allowedHosts?: string;
  interval: number;
  healInterval: number;
  shutdownTimeout: number;
  backoff: number;
  pruneSettle?: number;
  leaseLinger?: number;
  cacheDir?: string;
  planLog?: string;
  /** Bytes at which the plan log is rotated. */
  planLogMaxSize?: number;
  /** Rotated plan logs kept. */
  planLogKeep?: number;
  /** The sources file (`sources.ts`): many sources in one process. */
  config?: string;
  /** Reconcile only while holding the Kubernetes Lease (`leader.ts`). */
  leaderElect?: boolean;
  leaseName?: string;
  leaseNamespace?: string;
  leaseDuration?: number;
  renewDeadline?: number;
  retryPeriod?: number;
  /** The settings' flags (`engine/settings.ts`: `--prune`, `--source-id`, `--concurrency`, …), by their keys. */
  [setting: string]: unknown;
}

const duration = (value: string): number => {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof DurationError ? error.message : String(error));
  }
};

const size = (value: string): number => {
  try {
    return parseSize(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
};

const keepCount = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 100) throw new InvalidArgumentError('expected a whole number from 0 to 100');
  return n;
};

/** Checked as commander parses it, so a bad value is an error naming the flag. */
const listenFlag = (value: string): string => {
  try {
    parseListen(value);
    return value;
  } catch (error) {
    throw new InvalidArgumentError(error instanceof ListenSyntaxError ? error.message : String(error));
  }
};

/** Adds the flags of `watch` to its command; `done` receives the exit code. */
export const defineWatchCommand = (command: Command, io: CliIo, done: (code: number) => void): void => {
  command
    .option('--repo <url>', 'git remote to follow (https://, ssh://, git@host:, file://)')
    .option('--branch <name>', 'branch to follow (default: the remote default branch)')
    .option('--path <path>', 'manifest root inside the repository')
    .option('--dir <dir>', 'follow a local directory instead of a remote')
    .addOption(
      new Option(
        '--listen <host:port>',
        `address of the health, metrics and webhook port (env CORTEX_SYNC_LISTEN; default ${DEFAULT_LISTEN}, this machine only; 0.0.0.0:8080 for every interface)`,
      ).argParser(listenFlag),
    )
    .option(
      '--allowed-hosts <names>',
      'DNS names (comma-separated) on which /status, /metrics and the probes answer besides IP addresses and localhost (env CORTEX_SYNC_ALLOWED_HOSTS; the webhook answers on any)',
    )
    .addOption(
      new Option('--interval <duration>', 'how often to fetch the branch (0 = webhooks only)')
        .argParser(duration)
        .default(60_000, '1m'),
    )
    .addOption(
      new Option('--heal-interval <duration>', 're-plan and put back drift this often (0 = off)')
        .argParser(duration)
        .default(600_000, '10m'),
    )
    .addOption(
      new Option('--shutdown-timeout <duration>', 'on SIGTERM, wait this long for in-flight work')
        .argParser(duration)
        .default(30_000, '30s'),
    )
    .addOption(
      new Option('--backoff <duration>', 'first retry delay after a failed run (doubles, up to 5m)')
        .argParser(duration)
        .default(5000, '5s'),
    )
    .addOption(
      new Option(
        '--prune-settle <duration>',
        'a delete or archive waits until its manifest has been missing this long (seen missing twice); 0 = at once',
      )
        .argParser(duration)
        .default(DEFAULT_PRUNE_SETTLE_MS, formatDuration(DEFAULT_PRUNE_SETTLE_MS)),
    )
    .addOption(
      new Option(
        '--lease-linger <duration>',
        "keep the source's apply lease this long after an apply, so that a change that follows is applied without taking it again; another apply of the source waits meanwhile (0 = release after each apply)",
      )
        .argParser(duration)
        .default(DEFAULT_LEASE_LINGER_MS, formatDuration(DEFAULT_LEASE_LINGER_MS)),
    )
    .option(
      '--cache-dir <dir>',
      'a folder per source: its checkout and plan log (env CORTEX_SYNC_CACHE_DIR; default a temp directory)',
    )
    .option('--plan-log <file>', "JSON Lines log of every API operation (default: in the source's folder)")
    .addOption(
      new Option(
        '--plan-log-max-size <size>',
        'rotate the plan log before a run once it is this big (10M, 512K, bytes)',
      )
        .argParser(size)
        .default(DEFAULT_PLAN_LOG_MAX_BYTES, '10M'),
    )
    .addOption(
      new Option('--plan-log-keep <n>', 'rotated plan logs kept (plan-log.jsonl.1 the newest; 0 = none)')
        .argParser(keepCount)
        .default(DEFAULT_PLAN_LOG_KEEP),
    )
    .option(
      '--config <file>',
      'follow the sources this file lists (`sources: [...]`), in one process on one API budget',
    )
    .option(
      '--leader-elect',
      'reconcile only while holding a Kubernetes Lease (in-cluster config, else KUBECONFIG); a standby serves the probes',
    )
    .option('--lease-name <name>', 'the Lease the replicas elect a leader on', DEFAULT_LEASE_NAME)
    .option(
      '--lease-namespace <namespace>',
      "the Lease's namespace (default: the pod's, else the kubeconfig context's)",
    )
    .addOption(
      new Option('--lease-duration <duration>', 'how long a Lease that stopped changing is honoured')
        .argParser(duration)
        .default(DEFAULT_ELECTION_TIMING.leaseDurationMs, '15s'),
    )
    .addOption(
      new Option('--renew-deadline <duration>', 'the leader stops writing when no renewal succeeded for this long')
        .argParser(duration)
        .default(DEFAULT_ELECTION_TIMING.renewDeadlineMs, '10s'),
    )
    .addOption(
      new Option('--retry-period <duration>', 'how often a standby tries the Lease and the leader renews it')
        .argParser(duration)
        .default(DEFAULT_ELECTION_TIMING.retryPeriodMs, '2s'),
    );
  addSettingOptions(command, 'watch', SETTINGS).action(async (o: WatchFlags) => {
    const { runWatch } = await import('./run-command.js');
    done(await runWatch(o, io));
  });
};
