/** What cortex-sync keeps of a live entity (read by `live.ts`, compared by `model.ts`). */
import type { JsonObject } from '../../core/model.js';

/** What the catalog list and details endpoints say about an entity (only the fields we use). */
export interface EntitySummary {
  id?: string;
  tag: string;
  name?: string;
  type?: string;
  description?: string;
  isArchived?: boolean;
}

/** The live state of an entity. */
export interface EntityLive {
  /** The descriptor as the API stores it; `null` when only the summary is known (archived entities). */
  descriptor: JsonObject | null;
  /** From the catalog list or details, when those were read. */
  summary?: EntitySummary;
  /**
   * Merge mode: why the descriptor of this archived entity could not be read by its tag (its
   * `descriptor` stays `null`); the plan refuses to unarchive it (`merge-live.ts`).
   */
  descriptorUnreadable?: string;
}
