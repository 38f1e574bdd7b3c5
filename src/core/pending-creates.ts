/**
 * The port through which a kind records creates that have no client-chosen identity (an
 * Initiative's POST makes a new one every time) before sending them, so that neither a retry nor
 * a later run can create the object twice. The engine backs it with the apply lease's record in
 * the workspace (`engine/lease.ts`).
 */
export interface PendingCreates {
  /** When a create of `key` (`kind/id`) was recorded as pending, if one is. */
  since(key: string): number | undefined;
  /** Records the create in the workspace; call before its request is sent. */
  record(key: string): Promise<void>;
  /** The create's outcome is known (it exists, or it was refused). */
  clear(key: string): Promise<void>;
  /** How long after it was recorded a create whose outcome is unknown may still appear. */
  readonly windowMs: number;
  /** How often to look again meanwhile. */
  readonly pollMs: number;
  now(): number;
  /** Waits (cancellable by the run's signal). */
  sleep(ms: number): Promise<void>;
}
