/**
 * What a long-lived loader (the watcher) keeps between runs: each manifest file's load result,
 * reused while the file is unchanged, so that one edited file in a large repository costs one
 * read and one parse rather than all of them.
 *
 * A file counts as unchanged when its real path, device, inode, size, modification and change
 * times (nanoseconds) all match the stat taken before it was last read. Two guards keep that safe:
 * - a result that read the run's clock (`ParseContext.now`, e.g. an Initiative's target date
 *   checked against today) is never kept: such files are read and parsed again every run;
 * - a file changed within `settleMs` of being read is not trusted on the next run (a second write
 *   in the same timestamp tick, with the same size, would otherwise look unchanged; git's "racy
 *   clean" problem): it is read again until it has been still for that long.
 * Kept results are deep-frozen (objects, specs, documents, diagnostics): what the loader returns
 * from the cache must never be mutated, and a mutation fails loudly instead of corrupting the next
 * run. A cache belongs to one manifest root
 * and one set of kind definitions (kinds are told apart by name; parse limits are part of the key).
 */
import { statSync } from 'node:fs';
import type { DesiredObject, Diagnostic } from '../core/model.js';
import type { ParseContext } from '../core/kind-contract.js';
import type { DiscoveredFile } from './discover.js';

/** One file's load result: its valid objects and its problems. */
export interface FileLoadResult {
  readonly objects: readonly DesiredObject[];
  readonly diagnostics: readonly Diagnostic[];
}

/** How the last load used the cache (for logs, benchmarks and tests). */
interface ManifestCacheStats {
  /** Files whose kept result was reused (not read). */
  reused: number;
  /** Files read and parsed (new, changed, not yet settled, or depending on the clock). */
  loaded: number;
  /** Kept results dropped because their file is gone. */
  dropped: number;
}

export interface ManifestCacheOptions {
  /**
   * A file modified less than this long before it was read is read again on the next load.
   * Default 2 s (coarse file-system timestamps, e.g. FAT's 2 s).
   */
  settleMs?: number;
  /** Wall-clock time in milliseconds (file times are wall-clock); injectable for tests. */
  now?: () => number;
}

/**
 * What the last complete load of the root found: every manifest file (sorted, each read from the
 * path it was found at: a listing that went through a symlink is never kept), the YAML and JSON
 * files no kind owns, and each file's result as that load returned it.
 */
export interface Listing {
  /** The kinds and parse limits it was made with. */
  key: string;
  realRoot: string;
  files: readonly DiscoveredFile[];
  unownedYaml: readonly string[];
  unownedJson: readonly string[];
  results: ReadonlyMap<string, FileLoadResult>;
}

interface Identity {
  realPath: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

interface Entry {
  identity: Identity;
  /** The kind and parse limits the result was produced with. */
  key: string;
  result: FileLoadResult;
}

const sameIdentity = (a: Identity, b: Identity): boolean =>
  a.realPath === b.realPath &&
  a.dev === b.dev &&
  a.ino === b.ino &&
  a.size === b.size &&
  a.mtimeNs === b.mtimeNs &&
  a.ctimeNs === b.ctimeNs;

const identityOf = (realPath: string): Identity | undefined => {
  try {
    const s = statSync(realPath, { bigint: true });
    if (!s.isFile()) return undefined;
    return { realPath, dev: s.dev, ino: s.ino, size: s.size, mtimeNs: s.mtimeNs, ctimeNs: s.ctimeNs };
  } catch {
    // Not cached: the loader stats and reads it itself and reports the failure as without a cache.
    return undefined;
  }
};

/** Freezes a plain-data tree in place (objects, arrays; functions are left as they are). */
const deepFreeze = <T>(value: T): T => {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
};

export class ManifestCache {
  private readonly entries = new Map<string, Entry>();
  private readonly settleNs: bigint;
  private readonly wallNow: () => number;
  private current: ManifestCacheStats = { reused: 0, loaded: 0, dropped: 0 };
  private readonly sum: ManifestCacheStats = { reused: 0, loaded: 0, dropped: 0 };
  private listing: Listing | undefined;
  /** Paths noted as changed since the last load began ('all': anything may have). */
  private noted: Set<string> | 'all' = 'all';
  /** Calls of `noteChanges` so far, and when the current load began. */
  private notes = 0;
  private notesAtBegin = 0;
  private walked = true;

  constructor(options: ManifestCacheOptions = {}) {
    this.settleNs = BigInt(Math.round((options.settleMs ?? 2000) * 1e6));
    this.wallNow = options.now ?? Date.now;
  }

  /** Files with a kept result. */
  get size(): number {
    return this.entries.size;
  }

  /** How the most recent load used the cache. */
  get lastLoad(): Readonly<ManifestCacheStats> {
    return { ...this.current };
  }

  /** Did the most recent load walk the root (rather than start from the noted changes)? */
  get lastLoadWalked(): boolean {
    return this.walked;
  }

  /** How every load since this cache was made used it. */
  get totals(): Readonly<ManifestCacheStats> {
    return { ...this.sum };
  }

  /** Forgets everything (the next load reads every file). */
  clear(): void {
    this.entries.clear();
    this.listing = undefined;
    this.noted = 'all';
  }

  /**
   * Paths (relative to the root, `/`-separated) that changed since the last load, as the caller's
   * file events say; `.` means anything may have. Noted changes add up until a load reads them.
   */
  noteChanges(relPaths: readonly string[]): void {
    this.notes += 1;
    if (this.noted === 'all') return;
    for (const relPath of relPaths) {
      if (relPath === '.' || relPath === '') {
        this.noted = 'all';
        return;
      }
      this.noted.add(relPath);
    }
  }

  /**
   * For a load that trusts the noted changes: the last listing (when it was made with `key`) and
   * the paths noted since; undefined when a full load is needed (nothing listed, or `.` noted).
   */
  changesSinceListing(key: string): { listing: Listing; changed: ReadonlySet<string> } | undefined {
    const listing = this.listing;
    if (listing === undefined || listing.key !== key || this.noted === 'all') return undefined;
    return { listing, changed: new Set(this.noted) };
  }

  /** The result kept for a file taken as unchanged without a stat (undefined: it must be read). */
  keptResult(relPath: string): FileLoadResult | undefined {
    const kept = this.entries.get(relPath);
    if (kept === undefined) return undefined;
    this.current.reused += 1;
    this.sum.reused += 1;
    return kept.result;
  }

  /**
   * The loader calls this when a load is complete: `listing` is what it found (undefined when the
   * next load must walk again), and every change noted before it began has been read.
   */
  endLoad(listing: Listing | undefined, walked: boolean): void {
    this.listing = listing;
    this.walked = walked;
    // A change noted while the load ran may or may not have been read: the next load walks.
    this.noted = this.notes === this.notesAtBegin ? new Set() : 'all';
  }

  /** The loader calls this at the start of each load: changes noted from now on are for the next one. */
  beginLoad(): void {
    this.current = { reused: 0, loaded: 0, dropped: 0 };
    this.notesAtBegin = this.notes;
  }

  /**
   * The result for the file at `relPath` (really `realPath`): the kept one while the file is
   * unchanged, else `load(ctx)`'s, kept (frozen) unless it read `ctx.now` or the file is too fresh.
   * `key` names what else the result depends on (kind, parse limits).
   */
  resolve(
    relPath: string,
    realPath: string,
    key: string,
    ctx: ParseContext,
    load: (ctx: ParseContext) => FileLoadResult,
  ): FileLoadResult {
    const identity = identityOf(realPath);
    const kept = this.entries.get(relPath);
    if (identity !== undefined && kept !== undefined && kept.key === key && sameIdentity(kept.identity, identity)) {
      this.current.reused += 1;
      this.sum.reused += 1;
      return kept.result;
    }
    this.entries.delete(relPath);
    this.current.loaded += 1;
    this.sum.loaded += 1;
    const readAt = BigInt(Math.round(this.wallNow() * 1e6));
    let readClock = false;
    const tracked: ParseContext = {
      get now() {
        readClock = true;
        return ctx.now;
      },
    };
    const result = load(tracked);
    const settled =
      identity !== undefined &&
      readAt - identity.mtimeNs >= this.settleNs &&
      readAt - identity.ctimeNs >= this.settleNs;
    if (!settled || readClock) return result;
    this.entries.set(relPath, { identity, key, result: deepFreeze(result) });
    return result;
  }

  /** Drops the kept results of files no longer found (the loader calls this with every file it found). */
  retain(relPaths: readonly string[]): void {
    const found = new Set(relPaths);
    for (const relPath of this.entries.keys()) {
      if (found.has(relPath)) continue;
      this.entries.delete(relPath);
      this.current.dropped += 1;
      this.sum.dropped += 1;
    }
  }
}
