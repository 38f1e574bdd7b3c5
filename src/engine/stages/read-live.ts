/**
 * `read-live`: the live workspace, through the run's `LiveReader`: the full bulk read of every kind
 * (`fetchLiveState`), or, for a caller that keeps the last read (the watcher, `live-cache.ts`),
 * only the objects a change touched, read by identity (the state then says so: `scope`). Only GET
 * requests.
 */
import { withSignal } from '../recording-client.js';
import { fetchLiveState } from '../fetch-live.js';
import type { LiveReader, Stage } from './run.js';

/** The full read of the live workspace. */
export const readEverything: LiveReader = (request) => fetchLiveState({ ...request, holders: true });

export const readLive: Stage = async (run, ctx) => {
  const state = await run.readLive({
    client: withSignal(ctx.client, ctx.signal),
    handlers: ctx.handlers,
    readOnlyKinds: ctx.readOnlyKinds,
    store: ctx.store,
    desired: run.loaded?.desired ?? [],
    sourceId: ctx.sourceId,
  });
  return { ...run, state };
};
