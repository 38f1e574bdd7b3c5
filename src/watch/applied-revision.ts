/**
 * The revision the source's last clean apply applied, as the workspace remembers it: every clean
 * apply of a commit writes a mark into the source's apply lease record (`LeaseRecord.applied`,
 * written under the lease by the engine, `ReconcileInput.applyMark`). A watcher that restarted, or
 * a replica that became leader, has applied nothing yet itself; it reads the record so that its
 * first run at that same commit is a heal run (drift held under `onDrift: pr|report`) instead of
 * an apply that puts back what an open drift pull request proposes to keep.
 *
 * Only the workspace's record is trusted: a pull request controls the repository's files, never
 * this record. Anything else — no source id, a `--dir` source (its revision names no content), a
 * record that cannot be read, another newest mark (another commit, the Action, another version or
 * other settings) — leaves the run as it was: it applies, and the log says why once.
 */
import { createHash } from 'node:crypto';
import type { ApiClient } from '../api/types.js';
import type { SyncConfig } from '../engine/config.js';
import { readLease } from '../engine/lease.js';
import { SETTINGS } from '../engine/settings.js';
import { VERSION } from '../version.js';
import type { Logger } from './log.js';
import type { Trigger } from './runner.js';
import type { SourceSnapshot } from './source.js';

/**
 * Settings that change how a run goes but never what its plan writes (or that differ between
 * replicas of one source: the checkout's path). Every other setting of the table, a kind's own
 * included, goes into the mark, so a setting added later makes a restart with another value apply
 * (today's behaviour) rather than hold as drift what the new value would write.
 */
const HOW_NOT_WHAT = new Set([
  'dir',
  'leaseWaitSeconds',
  'requestTimeoutSeconds',
  'concurrency',
  'requestsPerMinute',
  'onDrift',
  'breakLease',
]);

/** The values of the settings that change what a plan writes (none is a secret), by key. */
const planSettingsOf = (config: SyncConfig): [string, unknown][] => {
  const fields = config as unknown as Readonly<Record<string, unknown>>;
  return SETTINGS.filter((spec) => !HOW_NOT_WHAT.has(spec.key)).map((spec) => [
    spec.key,
    fields[spec.config?.key ?? spec.key] ?? null,
  ]);
};

/**
 * The mark a clean apply of `revision` leaves in the lease record: the commit, this version and a
 * digest of the plan's settings. The Action's marks start `github merge`, so neither reads the other's.
 */
export const watchMarkOf = (revision: string, config: SyncConfig): string => {
  const settings = createHash('sha256')
    .update(JSON.stringify(planSettingsOf(config)))
    .digest('hex')
    .slice(0, 16);
  return `watch commit ${revision} cortex-sync ${VERSION} settings ${settings}`;
};

/** Why the record does not say this commit was applied, for the log. */
type Finding = { recorded: true } | { recorded: false; why: string };

export class AppliedRevision {
  private recorded: string | undefined;
  private lastSaid: string | undefined;

  /** `inProcess`: the revision this process last applied (the run history). */
  constructor(
    private readonly inProcess: () => string | undefined,
    private readonly log: Logger,
    private readonly shown: (text: string) => string,
  ) {}

  /** The revision drift is judged on: the last this process applied, else the one the record says. */
  current(): string | undefined {
    return this.inProcess() ?? this.recorded;
  }

  /**
   * The trigger a run goes as: `heal` while this process applied nothing yet, drift is held
   * (`pr`, `report`) and the record says this very commit was applied cleanly; else `trigger`.
   */
  async runAs(trigger: Trigger, snapshot: SourceSnapshot, config: SyncConfig, client: ApiClient): Promise<Trigger> {
    if (this.inProcess() !== undefined || (config.onDrift ?? 'heal') === 'heal') return trigger;
    // Read once: the held runs take the lease themselves (their plan is judged under it), and an
    // apply that leaves no mark (a CLI) is drift to this process as it would be without a restart.
    if (this.recorded === snapshot.revision) return 'heal';
    const finding = await this.find(snapshot, config, client);
    this.recorded = finding.recorded ? snapshot.revision : undefined;
    const said = finding.recorded
      ? `first run since start at ${snapshot.revision}, the commit the source's lease record says was applied last: a heal run (drift held, onDrift ${config.onDrift})`
      : `first run since start applies every change: ${finding.why}`;
    if (said !== this.lastSaid) this.log.info(this.shown(said), { revision: snapshot.revision });
    this.lastSaid = said;
    return finding.recorded ? 'heal' : trigger;
  }

  private async find(snapshot: SourceSnapshot, config: SyncConfig, client: ApiClient): Promise<Finding> {
    if (snapshot.commit !== true)
      return { recorded: false, why: 'the source is not a git commit (no revision names its files)' };
    if (config.sourceId === undefined) return { recorded: false, why: 'no source id, so no lease record to read' };
    let record;
    try {
      record = await readLease(client, config.sourceId);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { recorded: false, why: `the source's lease record could not be read (${message})` };
    }
    const last = record?.applied?.at(-1);
    if (last === undefined) return { recorded: false, why: "the source's lease record remembers no clean apply" };
    const newest = last.mark;
    if (newest === watchMarkOf(snapshot.revision, config)) return { recorded: true };
    return {
      recorded: false,
      why: newest.startsWith(`watch commit ${snapshot.revision} `)
        ? 'this commit was last applied by another version of cortex-sync or with other settings'
        : "the last clean apply the source's lease record remembers is not this commit",
    };
  }
}
