/**
 * The port of a watcher of many sources (or of an elected replica): `/status` per source, or
 * `{role: "standby", leader}` while another replica leads; `/metrics` with every source's metrics
 * labelled `source` and `cortex_sync_leader`; a push webhook triggers the sources whose repository
 * (and branch) it names, and only those.
 */
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import { printable } from '../core/printable.js';
import { credentialFreeUrl } from './source-folder.js';
import type { WatchMetrics } from './metrics.js';
import type { SourceEntry } from './sources-config.js';

/** What the port knows of one source. */
export interface ServedSource {
  entry: SourceEntry;
  metrics: WatchMetrics;
  /** Its loop while this replica leads (undefined: standby, or the source could not start). */
  loop?: {
    status(): Record<string, unknown>;
    readiness(): { ready: boolean; reason: string };
    runner: { trigger(trigger: 'webhook'): void };
  };
  /** Why the source does not run (its folder is locked by another watcher, …). */
  broken?: string;
}

/** `github.com/acme/catalog` from any way of writing the remote (https, ssh, scp-like, `.git` or not). */
export const repositoryKey = (url: string): string => {
  const plain = credentialFreeUrl(url.trim());
  const scpLike = /^[^/:@]+@([^:/]+):(.+)$/.exec(plain);
  const withoutScheme = scpLike
    ? `${scpLike[1]}/${scpLike[2]}`
    : plain.replace(/^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?/i, '');
  const [host = '', ...rest] = withoutScheme
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/');
  return [host.toLowerCase().replace(/:\d+$/, ''), ...rest].join('/');
};

interface PushPayload {
  ref?: unknown;
  after?: unknown;
  repository?: {
    clone_url?: unknown;
    ssh_url?: unknown;
    git_url?: unknown;
    html_url?: unknown;
    default_branch?: unknown;
  };
}

export type PushRouting =
  { trigger: true; revision?: string; sources: string[] } | { trigger: false; status: number; reason: string };

/** Which sources a verified push names: the same repository, and its branch (a source without one: the default branch). */
export const routePush = (event: string | undefined, body: Buffer, sources: readonly ServedSource[]): PushRouting => {
  if (event === 'ping') return { trigger: false, status: 200, reason: 'pong' };
  if (event !== 'push')
    return { trigger: false, status: 202, reason: `ignored event '${printable(event ?? '(none)')}'` };
  let payload: PushPayload;
  try {
    payload = JSON.parse(body.toString('utf8')) as PushPayload;
  } catch {
    return { trigger: false, status: 400, reason: 'the body is not JSON (content type must be application/json)' };
  }
  if (typeof payload !== 'object' || payload === null || typeof payload.ref !== 'string')
    return { trigger: false, status: 400, reason: 'push event without a ref' };
  const repo = payload.repository ?? {};
  const named = new Set(
    [repo.clone_url, repo.ssh_url, repo.git_url, repo.html_url].flatMap((u) =>
      typeof u === 'string' ? [repositoryKey(u)] : [],
    ),
  );
  const ref = payload.ref;
  const defaultBranch = typeof repo.default_branch === 'string' ? repo.default_branch : undefined;
  const matched = sources.filter(({ entry }) => {
    if (!entry.repo || !named.has(repositoryKey(entry.repo))) return false;
    const branch = entry.branch ?? defaultBranch;
    return branch !== undefined && ref === `refs/heads/${branch}`;
  });
  if (matched.length === 0)
    return { trigger: false, status: 202, reason: `no source follows ${printable(ref)} of this repository` };
  return {
    trigger: true,
    ...(typeof payload.after === 'string' ? { revision: payload.after } : {}),
    sources: matched.map((s) => s.entry.name),
  };
};

/** Every source's metrics (each registry labelled with its source) and the replica's own, as one exposition. */
export class FleetMetrics {
  readonly registry = new Registry();
  private readonly leaderGauge = new Gauge({
    name: 'cortex_sync_leader',
    help: 'Whether this replica holds the Kubernetes Lease and reconciles (1) or stands by (0); 1 without --leader-elect.',
    registers: [this.registry],
  });
  private readonly webhooks = new Counter({
    name: 'cortex_sync_webhook_deliveries_total',
    help: 'Webhook deliveries by the status answered (202 triggered a run or was acknowledged; 401 bad or missing signature; 200 ping or replay).',
    labelNames: ['status'],
    registers: [this.registry],
  });
  private changes = 0;

  constructor(private readonly sources: readonly ServedSource[]) {
    for (const s of sources) s.metrics.registry.setDefaultLabels({ source: s.entry.name });
  }

  setLeader(leading: boolean): void {
    this.changes += 1;
    this.leaderGauge.set(leading ? 1 : 0);
  }

  recordWebhook(status: number): void {
    this.changes += 1;
    this.webhooks.inc({ status: String(status) });
  }

  get version(): number {
    return this.sources.reduce((sum, s) => sum + s.metrics.version, this.changes);
  }

  readonly contentType = this.registry.contentType;

  async text(): Promise<string> {
    const all = await Promise.all([
      this.registry.getMetricsAsJSON(),
      ...this.sources.map((s) => s.metrics.registry.getMetricsAsJSON()),
    ]);
    // Series of one name from different sources differ by their `source` label: nothing is summed.
    return AggregatorRegistry.aggregate(all).metrics();
  }
}

/** `/status`: the standby's answer, or each source's own. */
export const fleetStatus = (
  sources: readonly ServedSource[],
  election: { role: 'leader' | 'standby'; leader: string; identity: string } | undefined,
): unknown => {
  if (election?.role === 'standby') return { role: 'standby', leader: election.leader };
  return {
    ...(election ? { role: 'leader', identity: election.identity } : {}),
    sources: Object.fromEntries(
      sources.map((s) => [
        s.entry.name,
        {
          ...(s.entry.onDrift ? { onDrift: s.entry.onDrift } : {}),
          ...(s.broken !== undefined ? { error: s.broken } : (s.loop?.status() ?? { state: 'starting' })),
        },
      ]),
    ),
  };
};
