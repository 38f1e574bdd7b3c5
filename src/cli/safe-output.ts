/**
 * What the CLI prints and logs, made safe in one place:
 * - every byte written to stdout and stderr (plans in every format, diagnostics, progress, errors,
 *   export and watch lines) and every plan-log entry goes through the redaction of the API key
 *   (`api/redact.ts`: the key whole, in part, in any case, base64- or URL-encoded);
 * - progress lines quote names the repository or the server controls (ids, error messages,
 *   paths): those strings pass through `printable()` before a line is made of them.
 * Renderers apply `printable()` to what they print themselves; JSON stays exact JSON.
 */
import { Writable } from 'node:stream';
import { redactDeep, type Redactor, createRedactor } from '../api/redact.js';
import type { PlanLogEntry } from '../core/model.js';
import { printable } from '../core/printable.js';
import type { EngineEvent, EventSink } from '../engine/context.js';
import type { PlanLogSink } from '../engine/plan-log.js';

type OutputStream = NodeJS.WritableStream & { isTTY?: boolean };

/** The secrets to redact from everything printed; more may be added once they are known. */
export interface OutputRedaction {
  add(secret: string | undefined): void;
  redact: Redactor;
  /** `stream` with every write redacted (same `isTTY`; writes go through at once, in order). */
  wrap<S extends OutputStream>(stream: S): OutputStream;
}

export const createOutputRedaction = (secrets: readonly string[] = []): OutputRedaction => {
  const known = new Set<string>();
  let redactors: Redactor[] = [];
  const add = (secret: string | undefined) => {
    if (secret === undefined || secret === '' || known.has(secret)) return;
    known.add(secret);
    redactors = [...redactors, createRedactor(secret)];
  };
  for (const secret of secrets) add(secret);
  const redact: Redactor = (text) => redactors.reduce((out, r) => r(out), text);
  const wrap = (stream: OutputStream): OutputStream => {
    const out = new Writable({
      decodeStrings: false,
      write(chunk: string | Buffer, _encoding, done) {
        const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
        stream.write(redactors.length === 0 ? text : redact(text));
        done();
      },
    }) as Writable & { isTTY?: boolean };
    if (stream.isTTY) out.isTTY = true;
    return out;
  };
  return { add, redact, wrap };
};

/** A plan log whose entries are redacted before they are written. */
export const redactingPlanLog = (sink: PlanLogSink, redact: Redactor): PlanLogSink => ({
  write: (entry) => sink.write(redactDeep(entry, redact) as PlanLogEntry),
  close: () => sink.close(),
});

/** The event with every string a repository or a server controls made printable. */
const printableEvent = (event: EngineEvent): EngineEvent => {
  switch (event.type) {
    case 'operation.done':
      return {
        ...event,
        id: printable(event.id),
        ...(event.error !== undefined ? { error: printable(event.error) } : {}),
      };
    case 'request':
      return { ...event, operation: printable(event.operation), method: printable(event.method) };
    case 'request.waiting':
      return {
        ...event,
        operation: printable(event.operation),
        method: printable(event.method),
        host: printable(event.host),
      };
    case 'reconcile.started':
      return { ...event, ...(event.sourceId !== undefined ? { sourceId: printable(event.sourceId) } : {}) };
    default:
      return event;
  }
};

/** `sink` receiving printable events (see `printableEvent`); its other methods kept. */
export const withPrintableEvents = <S extends EventSink>(sink: S): S => ({
  ...sink,
  emit: (event: EngineEvent) => sink.emit(printableEvent(event)),
});
