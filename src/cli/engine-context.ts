/** The engine context of `plan` and `apply`: the HTTP client the configuration asks for, with its key. */
import { openEngineContext } from '../engine/api-client.js';
import type { SyncConfig } from '../engine/config.js';
import type { EventSink } from '../engine/context.js';
import { hostOf } from '../runtime-io/io.js';
import type { CliSession } from './session.js';

/** Why plan and apply need a key. */
const NEEDS_KEY = 'plan and apply read the live workspace';

/** The run's context: the client the configuration asks for, one clock, the stop signal, the event sink. */
export const contextFor = (c: SyncConfig, events: EventSink, session: CliSession) => {
  const ctx = openEngineContext(c, NEEDS_KEY, { clock: session.clock, signal: session.stop, events });
  session.apiHost = hostOf(c.baseUrl);
  return ctx;
};
