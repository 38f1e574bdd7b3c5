/**
 * Where the manifests come from: a port with two adapters, a git remote (`git-source.ts`) and a
 * local directory (`dir-source.ts`). The watcher only asks for the newest revision and is told
 * when there may be a new one.
 */
import type { DriftGit } from '../drift/git-commit.js';

export interface SourceSnapshot {
  /** The manifest root to reconcile (inside the checkout for git). */
  dir: string;
  /** The commit for git; `local` for a directory. */
  revision: string;
  /** Files (relative to `dir`) known to have changed since the previous snapshot, when the source knows. */
  changedFiles?: readonly string[];
  /** The revision is a commit: it names exactly these files (a directory's `local` names nothing). */
  commit?: boolean;
}

export type SourceTrigger = 'commit' | 'file-change';

export interface Source {
  /** For logs: the remote without credentials, or the directory. */
  readonly description: string;
  /** Brings the working copy to the newest revision (fetch and check out for git). */
  sync(signal: AbortSignal): Promise<SourceSnapshot>;
  /** Starts noticing new revisions (resolves once it does); `onChange` may be called any number of times. */
  watch(onChange: (trigger: SourceTrigger) => void, onError: (error: Error) => void): Promise<void>;
  /** What `/status` shows of how it notices changes (the debounce of `--dir`), when it has anything to say. */
  state?(): Record<string, unknown>;
  /** Stops noticing changes and releases watchers and timers. Idempotent. */
  close(): Promise<void>;
  /** Where a drift pull request is committed and pushed (a git source, once synced); none: drift is reported only. */
  driftRepository?(): DriftRepository | undefined;
}

/** The source's repository as a drift pull request uses it: git with the source's credentials, and where the manifests are. */
export interface DriftRepository {
  git: DriftGit;
  /** The manifest root inside the repository (`''`: its root). */
  prefix: string;
  /** The followed branch (the pull request's base) and the commit checked out. */
  branch: string;
  revision: string;
  /** The remote URL as configured (may hold credentials: never shown). */
  remote: string;
}

/** An interval with ±`share` uniform jitter, so many watchers of one remote do not poll in step. */
export const jittered = (ms: number, random: () => number = Math.random, share = 0.05): number =>
  Math.max(1, Math.round(ms * (1 + share * (2 * random() - 1))));
