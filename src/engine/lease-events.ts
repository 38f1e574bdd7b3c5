/**
 * The lease's events as one line each, for every runtime's log (the CLI's stderr, the watcher's
 * JSON log, the Action's job log): who holds the lease, since and until when, how long this run
 * has waited, and whose lease it took or broke. Holder names and source ids come from a record
 * anyone with a key can write: they are printed through `printable()`.
 */
import { printable } from '../core/printable.js';
import type { EngineEvent } from './context.js';
import { formatLeaseTime } from './lease-judge.js';

const seconds = (ms: number): string => `${Math.max(0, Math.round(ms / 1000))} s`;

/** Longest holder name printed: a record is anyone's to write, a log line is not. */
const MAX_HOLDER_SHOWN = 120;

const name = (holder: string): string => {
  const shown = printable(holder);
  return shown.length <= MAX_HOLDER_SHOWN ? shown : `${shown.slice(0, MAX_HOLDER_SHOWN)}…`;
};

const heldBy = (holder: string, since: number | undefined): string =>
  `${name(holder)}${since !== undefined ? ` since ${formatLeaseTime(since)}` : ''}`;

/** The line for a lease event; undefined for any other event. */
export const leaseEventLine = (event: EngineEvent): string | undefined => {
  switch (event.type) {
    case 'lease.waiting': {
      const until =
        event.until === undefined
          ? ''
          : event.untilBelieved
            ? `, until ${formatLeaseTime(event.until)}`
            : `, claiming until ${formatLeaseTime(event.until)} (not believed: free once not renewed for a lease's length)`;
      const waited = `waited ${seconds(event.waitedMs)} of ${seconds(event.waitLimitMs)}`;
      const source = `\`${printable(event.sourceId)}\``;
      if (event.reservedFor !== undefined)
        return `Waiting for the apply lease of source ${source}: let go for ${name(event.reservedFor)}, which waited for it first; ${waited}.`;
      const how = event.idle === true ? 'kept idle by a watcher, asked to let it go; ' : '';
      // The first line says everything; the next ones (at least every 10 s) who still holds it.
      return event.waitedMs < 1000
        ? `Waiting for the apply lease of source ${source}: ${how}held by ${heldBy(event.holder, event.since)}${until}; ${waited}.`
        : `Still waiting for the apply lease of source ${source} (${how}held by ${name(event.holder)}); ${waited}.`;
    }
    case 'lease.taken': {
      const source = `\`${printable(event.sourceId)}\``;
      const from = event.from;
      const after = event.waited === false ? '' : ` after ${seconds(event.waitedMs)}`;
      if (from === undefined) return `Took the apply lease of source ${source}${after}.`;
      const who = heldBy(from.holder, from.since);
      switch (from.why) {
        case 'broken':
          return `Broke the apply lease of source ${source} held by ${who}${from.until !== undefined ? `, until ${formatLeaseTime(from.until)}` : ''} (--break-lease).`;
        case 'released':
          return `Took the apply lease of source ${source}${after}: ${who} released it.`;
        case 'expired':
          return `Took the apply lease of source ${source}${after}: the lease of ${who} expired by the server's clock.`;
        case 'unreadable':
          return `Took the apply lease of source ${source}${after}: its record could not be read and did not change for a lease's length.`;
        default:
          return `Took the apply lease of source ${source}${after}: the lease of ${who} was not renewed for a lease's length (its holder is gone, whatever its clock says).`;
      }
    }
    case 'lease.handed':
      return `Let the apply lease of source \`${printable(event.sourceId)}\` go, kept since the last run: ${name(event.to)} waits for it; the next run waits its turn.`;
    case 'lease.lost':
      return `The apply lease of source \`${printable(event.sourceId)}\` was taken by ${name(event.holder)} (--break-lease): no further change of this apply starts.`;
    default:
      return undefined;
  }
};
