/**
 * `watch --config FILE` and `watch --leader-elect`: many sources in one process, and replicas of
 * which one reconciles.
 * - One port, one API client per API (base URL, rate, concurrency) shared by every source through
 *   the fair budget (`fair-budget.ts`): a busy source cannot starve the others.
 * - One folder per source (its checkout and plan log), named from its URL, branch and path, locked
 *   for the life of the process; a source whose folder cannot be had, or whose run fails, is
 *   reported in `/status` and the others go on.
 * - With `--leader-elect`, the loops run only while this replica holds the Lease (`leader.ts`);
 *   losing it closes the fence on writes at once, then aborts every run and stops the loops. The
 *   Cortex apply lease each run takes stays the second fence.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { configureRun } from '../engine/config.js';
import { SETTINGS } from '../engine/settings.js';
import { type CliIo, manifestRootProblems } from '../runtime-io/io.js';
import { settingsSaid } from '../runtime-io/setting-options.js';
import { VERSION } from '../version.js';
import type { WatchFlags } from './command.js';
import { DEFAULT_LEASE_LINGER_MS, DEFAULT_PRUNE_SETTLE_MS } from './defaults.js';
import { createDirSource } from './dir-source.js';
import { createGitSource, describeRemote, remoteSecrets, urlCredentials } from './git-source.js';
import { checkTiming, LeaderElector } from './leader.js';
import { defaultNamespace, kubernetesLeaseStore, loadKubeConfig } from './lease-store.js';
import { createLogger, type Logger, secretRedactor } from './log.js';
import { WatchMetrics } from './metrics.js';
import { DEFAULT_PLAN_LOG_KEEP, DEFAULT_PLAN_LOG_MAX_BYTES } from './plan-log-rotation.js';
import { hostNames, lockSourceFolder, type WatchAccess, watchAccess } from './run-command.js';
import { ListenError, startServer } from './server.js';
import { type SharedClients, sharedClients } from './shared-client.js';
import { dirSourceFolder, gitSourceFolder } from './source-folder.js';
import { readSourcesConfig, type SourceEntry } from './sources-config.js';
import { FleetMetrics, fleetStatus, routePush, type ServedSource } from './sources-http.js';
import { createSourceLoop, type SourceLoop } from './watcher.js';
import { RecentDeliveries } from './webhook.js';
import { BodyBudget } from './webhook-body.js';

/** A source of the fleet: its entry, folder, metrics, and its loop while this replica leads. */
interface FleetSource extends ServedSource {
  folder: string;
  dir?: string;
  release?: () => Promise<void>;
  running?: SourceLoop;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The sources: the file's, or the one the single-source flags name (`--leader-elect` alone). */
const entriesOf = async (o: WatchFlags, io: CliIo): Promise<SourceEntry[]> => {
  if (o.config === undefined) {
    if (Boolean(o.repo) === Boolean(o.dir))
      throw new ConfigError('watch needs exactly one of --repo URL or --dir DIR (or --config FILE)');
    return [
      {
        name: 'default',
        ...(o.repo ? { repo: o.repo } : { dir: o.dir ?? '.' }),
        ...(o.branch ? { branch: o.branch } : {}),
        ...(o.path ? { path: o.path } : {}),
        line: 0,
      },
    ];
  }
  const oneSourceFlags = (['repo', 'dir', 'branch', 'path', 'sourceId', 'planLog'] as const).filter(
    (k) => o[k] !== undefined,
  );
  if (oneSourceFlags.length > 0)
    throw new ConfigError(
      `--config lists the sources: ${oneSourceFlags.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} belong${oneSourceFlags.length === 1 ? 's' : ''} in each source's entry`,
    );
  return readSourcesConfig(resolve(io.cwd, o.config), o.config);
};

/** Each source's folder, locked; a source that cannot have its folder is reported broken, the others go on. */
const placeSources = async (placed: FleetSource[], io: CliIo, cacheDir: string, logger: Logger) => {
  for (const source of placed) {
    const { entry } = source;
    try {
      if (entry.dir !== undefined) {
        source.dir = resolve(io.cwd, entry.dir);
        const problems = await manifestRootProblems(source.dir, `sources ${entry.name}: dir`);
        if (problems[0]) throw new ConfigError(problems[0].message);
      }
      source.folder = join(
        cacheDir,
        entry.repo
          ? gitSourceFolder({
              url: entry.repo,
              ...(entry.branch ? { branch: entry.branch } : {}),
              ...(entry.path ? { path: entry.path } : {}),
            })
          : dirSourceFolder(await realpath(source.dir ?? '.')),
      );
      const described = entry.repo
        ? `${describeRemote(entry.repo)}${entry.branch ? `#${entry.branch}` : ''}`
        : (source.dir ?? '');
      const { lock, lockLost } = await lockSourceFolder(source.folder, described, io, logger);
      if (!lock) return { stopped: true };
      source.release = () => lock.release();
      void lockLost.then(() => {
        source.broken = 'another process took this source folder';
        logger.error('another process took this source folder: stopping this source', { source: entry.name });
        void source.running?.stop(1000);
      });
    } catch (error) {
      source.broken = error instanceof Error ? error.message : String(error);
      logger.error('source cannot run', { source: entry.name, error: source.broken });
    }
  }
  return { stopped: false };
};

/** One source's loop for this term (a new source object: a stopped one is not restarted). */
const loopOf = (
  s: FleetSource,
  o: WatchFlags,
  io: CliIo,
  at: { access: WatchAccess; logger: Logger; shared: SharedClients },
) => {
  const { entry } = s;
  const auth = { ...at.access.auth };
  const fromUrl = entry.repo ? urlCredentials(entry.repo) : undefined;
  if (fromUrl && !auth.token) auth.basic = fromUrl;
  const source = entry.repo
    ? createGitSource({
        url: entry.repo,
        ...(entry.branch ? { branch: entry.branch } : {}),
        ...(entry.path ? { path: entry.path } : {}),
        checkoutDir: join(s.folder, 'checkout'),
        knownHostsFile: join(s.folder, '..', 'known_hosts'),
        intervalMs: entry.intervalMs ?? o.interval,
        auth,
        env: io.env,
      })
    : createDirSource({ dir: s.dir ?? '.' });
  const said = {
    ...settingsSaid(o, SETTINGS),
    ...(entry.sourceId !== undefined ? { sourceId: entry.sourceId } : {}),
    ...(entry.prune !== undefined ? { prune: entry.prune } : {}),
    ...(entry.onDrift !== undefined ? { onDrift: entry.onDrift } : {}),
  };
  // New metrics each term (what a loop registers, its drift gauges, is registered once per registry).
  s.metrics = new WatchMetrics();
  s.metrics.registry.setDefaultLabels({ source: entry.name });
  return createSourceLoop({
    source,
    resolveConfig: (root) =>
      configureRun(
        { said: { ...said, dir: root }, ...(s.dir !== undefined ? { originDir: s.dir } : {}) },
        io.env,
        io.cwd,
      ),
    apiKey: at.access.apiKey,
    secrets: [...at.access.secrets, ...(entry.repo ? remoteSecrets(entry.repo) : [])],
    ...(at.access.webhookSecret ? { webhookSecret: at.access.webhookSecret } : {}),
    healIntervalMs: o.healInterval,
    pruneSettleMs: o.pruneSettle ?? DEFAULT_PRUNE_SETTLE_MS,
    leaseLingerMs: o.leaseLinger ?? DEFAULT_LEASE_LINGER_MS,
    planLogFile: join(s.folder, 'plan-log.jsonl'),
    planLogRotation: {
      maxBytes: o.planLogMaxSize ?? DEFAULT_PLAN_LOG_MAX_BYTES,
      keep: o.planLogKeep ?? DEFAULT_PLAN_LOG_KEEP,
    },
    logger: at.logger.with({ source: entry.name }),
    backoff: { baseMs: Math.max(1, o.backoff) },
    metrics: s.metrics,
    createClient: at.shared.clientFor(entry.name),
  });
};

/** Starts and stops the loops of every source that can run, one term at a time. */
const terms = (sources: FleetSource[], start: (s: FleetSource) => SourceLoop, logger: Logger) => {
  let chain = Promise.resolve();
  const begin = () =>
    (chain = chain.then(async () => {
      for (const s of sources) {
        if (s.broken !== undefined || s.running) continue;
        const loop = start(s);
        s.running = loop;
        s.loop = loop;
        await loop.start().catch((error: unknown) => {
          s.broken = error instanceof Error ? error.message : String(error);
          logger.error('source cannot run', { source: s.entry.name, error: s.broken });
        });
      }
    }));
  const end = (timeoutMs: number) =>
    (chain = chain.then(async () => {
      await Promise.all(
        sources.map(async (s) => {
          const loop = s.running;
          s.running = undefined;
          await loop?.stop(timeoutMs);
          s.loop = undefined;
        }),
      );
    }));
  return { begin, end };
};

/** The elector of `--leader-elect`, or undefined. */
const electorOf = (
  o: WatchFlags,
  io: CliIo,
  identity: string,
  logger: Logger,
  onLead: () => void,
  onLose: (why: string) => void,
) => {
  if (o.leaderElect !== true) return undefined;
  const timing = {
    leaseDurationMs: o.leaseDuration ?? 15_000,
    renewDeadlineMs: o.renewDeadline ?? 10_000,
    retryPeriodMs: o.retryPeriod ?? 2_000,
  };
  const wrong = checkTiming(timing);
  if (wrong) throw new ConfigError(`--lease-duration, --renew-deadline, --retry-period: ${wrong}`);
  const kc = loadKubeConfig(io.env);
  const namespace =
    o.leaseNamespace ??
    defaultNamespace(kc, () => {
      try {
        return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8');
      } catch {
        return undefined;
      }
    });
  const store = kubernetesLeaseStore(kc, namespace, o.leaseName ?? 'cortex-sync');
  logger.info('leader election', { lease: store.describe, identity });
  return new LeaderElector({
    store,
    identity,
    timing,
    onStartedLeading: onLead,
    onStoppedLeading: onLose,
    onNewLeader: (leader) => logger.info('leader observed', { leader: leader || '(none)' }),
    onError: (error) =>
      logger.warn('lease request failed', { error: error instanceof Error ? error.message : String(error) }),
  });
};

export const runSources = async (o: WatchFlags, io: CliIo): Promise<number> => {
  const entries = await entriesOf(o, io);
  const cacheDir = resolve(io.cwd, o.cacheDir ?? io.env.CORTEX_SYNC_CACHE_DIR ?? join(tmpdir(), 'cortex-sync-watch'));
  const access = watchAccess({ ...o, repo: undefined, dir: o.config === undefined ? o.dir : undefined }, io, cacheDir);
  const repoSecrets = entries.flatMap((e) => (e.repo ? remoteSecrets(e.repo) : []));
  const logger = createLogger({
    write: (line) => io.stdout.write(line),
    secrets: [access.apiKey, access.webhookSecret ?? '', ...access.secrets, ...repoSecrets],
  });
  const identity = `${hostname()}_${randomUUID().slice(0, 8)}`;
  const sources: FleetSource[] = entries.map((entry) => ({ entry, folder: '', metrics: new WatchMetrics() }));
  // Every write asks the elector as it starts (no elector: this process is the only writer).
  const fence = { mayWrite: () => true };
  const shared = sharedClients(o, io.env, {
    apiKey: access.apiKey,
    userAgent: `cortex-sync/${VERSION} (${identity})`,
    mayWrite: () => fence.mayWrite(),
  });
  const fleet = terms(sources, (s) => loopOf(s, o, io, { access, logger, shared }), logger);
  const metrics = new FleetMetrics(sources);
  let stopping = false;
  const elector = electorOf(
    o,
    io,
    identity,
    logger,
    () => {
      logger.info('leading: starting the sources', { identity });
      metrics.setLeader(true);
      void fleet.begin();
    },
    (why) => {
      // The fence is already closed (the budget asks the elector before every write): the runs are aborted now.
      logger.warn('no longer leading: stopping every run', { why });
      metrics.setLeader(false);
      void fleet.end(Math.min(o.shutdownTimeout, 5000));
    },
  );
  if (elector) fence.mayWrite = () => elector.mayWrite();
  const server = await serveFleet(o, io, {
    sources,
    access,
    metrics,
    logger,
    elector,
    isStopping: () => stopping,
    repoSecrets,
  });
  io.stdout.write(`listening on ${server.url}\n`);
  const { stopped } = await placeSources(sources, io, cacheDir, logger);
  if (stopped) {
    await server.close();
    for (const s of sources) await s.release?.();
    return 0;
  }
  logger.info('watching', { sources: sources.map((s) => s.entry.name), leaderElect: Boolean(elector) });
  metrics.setLeader(!elector);
  if (elector) elector.start();
  else void fleet.begin();

  await (io.untilStopped?.() ?? new Promise<void>(() => {}));
  stopping = true;
  await fleet.end(o.shutdownTimeout);
  await elector?.stop();
  await shared.close();
  await server.close();
  for (const s of sources) await s.release?.();
  logger.info('stopped');
  return 0;
};

/** The port: probes, `/status`, `/metrics`, and the webhook routed to the sources it names. */
const serveFleet = async (
  o: WatchFlags,
  io: CliIo,
  at: {
    sources: FleetSource[];
    access: WatchAccess;
    metrics: FleetMetrics;
    logger: Logger;
    elector: LeaderElector | undefined;
    isStopping: () => boolean;
    repoSecrets: string[];
  },
) => {
  const { sources, access, metrics, logger, elector } = at;
  const election = () =>
    elector ? { role: elector.role, leader: elector.leader, identity: elector.identity } : undefined;
  try {
    return await startServer(access.listen.host, access.listen.port, {
      healthy: () => ({ ok: !at.isStopping(), reason: at.isStopping() ? 'shutting down' : 'ok' }),
      ready: () => {
        if (at.isStopping()) return { ready: false, reason: 'shutting down' };
        if (elector && elector.role === 'standby')
          return { ready: true, reason: `standby; leader: ${elector.leader || '(none)'}` };
        return {
          ready: true,
          reason: sources
            .map((s) => `${s.entry.name}: ${s.broken ?? s.loop?.readiness().reason ?? 'starting'}`)
            .join('\n'),
        };
      },
      metrics: async () => ({ contentType: metrics.contentType, text: await metrics.text() }),
      status: () => fleetStatus(sources, election()),
      // A standby runs nothing: it says so (503), so that the sender sees the push was not taken
      // here and can send it again (a retry through the Service may reach the leader); the
      // leader's fetch interval picks the push up meanwhile.
      unavailable: () =>
        elector?.role === 'standby'
          ? `this replica is a standby; the leader is ${elector.leader || '(none yet)'}, whose --interval fetch picks the push up`
          : undefined,
      decide: (event, body) => {
        const routed = routePush(event, body, sources);
        if (!routed.trigger) return routed;
        for (const s of sources) if (routed.sources.includes(s.entry.name)) s.loop?.runner.trigger('webhook');
        logger.info('webhook: push received', { sources: routed.sources });
        return { trigger: true };
      },
      onPush: () => {},
      webhookSecret: access.webhookSecret,
      branch: undefined,
      deliveries: new RecentDeliveries(),
      bodies: new BodyBudget(),
      allowedHosts: hostNames(o.allowedHosts ?? io.env.CORTEX_SYNC_ALLOWED_HOSTS),
      redact: secretRedactor([access.apiKey, access.webhookSecret ?? '', ...access.secrets, ...at.repoSecrets]),
      onWebhookAnswered: (status) => metrics.recordWebhook(status),
    });
  } catch (error) {
    if (error instanceof ListenError)
      throw new ConfigError(`${access.listenAt.named} ${access.listenAt.value}: ${error.reason}`);
    throw error;
  }
};
