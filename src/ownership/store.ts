/**
 * The port through which the engine keeps its own records in the workspace (release-please's
 * `Scm` port is the model): which objects each source manages (its ownership record), the apply
 * lease and the creates it carries. The engine depends on this interface only and never speaks
 * the wire format the records are stored in; the adapter the registry hands it stores them as
 * entities of a custom entity type (`src/kinds/entity/records/`). Types only, and the client is
 * always the caller's (so each write is logged as the engine's own step).
 */
import type { ApiClient } from '../api/types.js';
import type { Diagnostic, KindName, LiveObject, ObjectKey } from '../core/model.js';
import type { Declaration, RecordMeta } from '../core/record-meta.js';

export type { Declaration, RecordMeta } from '../core/record-meta.js';

/** Every source's ownership record, as read in one go. */
export interface OwnershipIndex {
  /** source id → keys it manages. */
  bySource: Map<string, Set<ObjectKey>>;
  /** Object key → owning source id (the first one found; `conflicts` lists the others). */
  ownerOf: Map<ObjectKey, string>;
  conflicts: { key: ObjectKey; sources: string[] }[];
  /** Records claiming to be a source's that are not at that source's own id (`tag`: where they are): not trusted. */
  ignored: { tag: string; source: string }[];
  /** source id → its record's origin and settings (trusted records only). */
  meta: Map<string, RecordMeta>;
  /** source id → where each of its objects was declared, as far as its record says. */
  declared: Map<string, Map<ObjectKey, Declaration>>;
  /**
   * source id → the ids the server assigned to its objects whose identity the server assigns (an
   * Initiative's cid), as its record keeps them: what confirms such an object by a read by
   * identity when a list leaves it out.
   */
  serverIds: Map<string, Map<ObjectKey, string>>;
  /**
   * source id → why its record could not be read by its id (`OwnershipSnapshot.readRecordsOf`):
   * the list left it out, and an object names the source as writing keys into it.
   */
  unreadable?: Map<string, string>;
}

/** A source's record, as the engine writes it. */
interface OwnershipRecord {
  sourceId: string;
  objects: ReadonlySet<ObjectKey>;
  /** Where the objects were declared (objects left out: unknown). */
  declared?: ReadonlyMap<ObjectKey, Declaration>;
  /** The server-assigned ids of its objects (see `OwnershipIndex.serverIds`). */
  serverIds?: ReadonlyMap<ObjectKey, string>;
  meta?: RecordMeta;
}

/** What one read of the records found, and how to write this source's record after it. */
export interface OwnershipSnapshot {
  index: OwnershipIndex;
  /** Warnings about the records (one claiming another source's, an object two sources list). */
  diagnostics: Diagnostic[];
  /**
   * Writes this source's record through `client` (the first write of a workspace prepares it:
   * the snapshot knows whether that is needed). Entries of kinds this version does not know that
   * the source's record held are kept.
   */
  write(client: ApiClient, record: OwnershipRecord): Promise<void>;
  /**
   * The same snapshot with the records of `sources` that the list left out read by their ids (a
   * list can leave a record out): each found joins the index, a source with none claims nothing,
   * and one whose read failed is in `index.unreadable` with the reason. Sources the list showed
   * are not read again.
   */
  readRecordsOf?(client: ApiClient, sources: readonly string[]): Promise<OwnershipSnapshot>;
}

/** A create recorded before its request (see `core/pending-creates.ts`). */
export interface PendingCreate {
  /** `kind/id` of the object being created. */
  key: string;
  /** When the create was recorded (server time, ms since the epoch). */
  since: number;
}

/** The apply lease of a source: who holds it and until when, and the creates it carries. */
export interface LeaseRecord {
  source: string;
  holder: string;
  /** Server time (ms since the epoch; the API's `Date` header, or the holder's clock without one); 0 = released. */
  expiresAt: number;
  /** Server time the holder took it. */
  since?: number;
  /** Counts the holder's writes: a record that changes belongs to a holder that is alive. */
  beat?: number;
  /**
   * The holder keeps the lease between its runs (a watcher's linger) and is applying nothing:
   * another apply that waits asks it to let go (`waiting`). Absent in records of older versions.
   */
  idle?: boolean;
  /**
   * Applies waiting for the lease, written by them into an idle holder's record: the holder lets
   * the lease go, and a released record that names them is theirs to take first (for a moment).
   */
  waiting?: LeaseWaiter[];
  pending: PendingCreate[];
  /**
   * The last clean applies that asked to be remembered (`ReconcileInput.applyMark`: the Action's
   * merge commit), newest last, at most `MAX_APPLIED_MARKS`: what a re-run of the same merge reads
   * to apply nothing twice, whatever became of its comment. Carried by every write of the record.
   */
  applied?: AppliedMark[];
}

/** A clean apply remembered in the lease record: what the caller named it, and the server time it ended. */
export interface AppliedMark {
  mark: string;
  at: number;
}

export const MAX_APPLIED_MARKS = 10;

/** An apply that waits for the lease. */
export interface LeaseWaiter {
  holder: string;
  /** Server time (as the waiter sees it) it asked. */
  since: number;
}

/** A lease as read: the record, or `unreadable` with a fingerprint of whatever is there. */
export interface SeenLease {
  holder: string;
  /** Server time; 0 = released. */
  expiresAt: number;
  since?: number;
  /** The holder keeps it idle between its runs (a watcher). */
  idle?: boolean;
  /** Who waits for it (holder names), as the record says. */
  waiting?: readonly string[];
  /** What the record holds, to tell a rewritten record from an unchanged one. */
  fingerprint: string;
  unreadable?: boolean;
}

/** What one read of the lease found, and the server's time from the answer's `Date` header. */
export interface LeaseRead {
  lease: LeaseRecord | undefined;
  seen: SeenLease | undefined;
  date: string | undefined;
}

/** Where the apply lease lives. Every read and write returns the answer's `Date` header (the server's clock). */
export interface LeaseStore {
  /** The lease's id for a source, as the plan log names its writes. */
  id(sourceId: string): string;
  /** Makes sure a lease can be written (a first apply of a workspace; two may race). */
  prepare(client: ApiClient): Promise<void>;
  /** A record that does not parse is `unreadable`, never absent. */
  read(client: ApiClient, sourceId: string): Promise<LeaseRead>;
  write(client: ApiClient, record: LeaseRecord): Promise<string | undefined>;
}

/** The engine's records in the workspace. */
export interface OwnershipStore {
  /**
   * The kinds whose live objects the store needs before it reads (it keeps its records among
   * the workspace's objects, and learns from them whether there are any): read first.
   */
  readonly uses: readonly KindName[];
  /** Is this live object part of the store itself (the records' type)? It is never planned, shown or exported. */
  isOwn(obj: LiveObject): boolean;
  /** The id of a source's record, as plans and the plan log name its writes. */
  recordId(sourceId: string): string;
  /**
   * Reads every source's record. `seen`: the live objects of `uses`; `kinds`: the kinds whose
   * entries count (entries of other kinds are ignored, and kept when this source's is rewritten).
   */
  read(
    client: ApiClient,
    input: {
      sourceId: string | undefined;
      seen: readonly LiveObject[];
      kinds: ReadonlySet<KindName>;
      /**
       * Read the list of records twice and keep every record either read showed: before an object
       * no record lists is adopted (a list can leave out the record that does).
       */
      twice?: boolean;
    },
  ): Promise<OwnershipSnapshot>;
  readonly lease: LeaseStore;
}
