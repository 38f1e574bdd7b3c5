/**
 * The watcher's defaults that its flags show in `watch --help`, in a module of their own: the
 * flags are defined without loading the watcher (`command.ts`).
 */

/** How long a removed manifest must stay missing before its object is removed (default). */
export const DEFAULT_PRUNE_SETTLE_MS = 10_000;

/** How long the apply lease is kept after a clean apply, for a change that follows (default). */
export const DEFAULT_LEASE_LINGER_MS = 20_000;
