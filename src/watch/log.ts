/**
 * The watcher's logs: one JSON object per line on stdout (`ts`, `level`, `msg`, then fields such
 * as `runId` and `revision`). Every string is redacted against the process's secrets (API key,
 * webhook secret, git token) before it is written, so no code path can leak one by accident:
 * whole, or any run of 8 of its characters in any case, base64- or URL-encoded.
 */
import { createRedactor, type Redactor, redactDeep } from '../api/redact.js';

type LogLevel = 'debug' | 'info' | 'warn' | 'error';

type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (e.g. the run id and revision of one run). */
  with(fields: LogFields): Logger;
}

interface LoggerOptions {
  write: (line: string) => void;
  /** Values never written: each occurrence becomes `[REDACTED]`. */
  secrets: readonly string[];
  now?: () => number;
}

/**
 * One function that removes every secret the watcher knows from a text, in every form the API
 * redaction knows (whole, any 8-character run, any case, base64, URL-encoded). The logs, the HTTP
 * port and the run history all use it.
 */
export const secretRedactor = (secrets: readonly string[]): Redactor => {
  const redactors = [...new Set(secrets)].filter((s) => s.length > 0).map(createRedactor);
  return (text) => redactors.reduce((out, r) => r(out), text);
};

export const createLogger = (options: LoggerOptions, base: LogFields = {}): Logger => {
  const redact = secretRedactor(options.secrets);
  const now = options.now ?? Date.now;
  const log = (level: LogLevel, msg: string, fields: LogFields = {}): void => {
    const record = { ts: new Date(now()).toISOString(), level, msg, ...base, ...fields };
    try {
      options.write(`${JSON.stringify(redactDeep(record, redact))}\n`);
    } catch {
      // A log line that cannot be written (closed stdout) must not stop the loop.
    }
  };
  return {
    log,
    info: (msg, fields) => log('info', msg, fields),
    warn: (msg, fields) => log('warn', msg, fields),
    error: (msg, fields) => log('error', msg, fields),
    with: (fields) => createLogger(options, { ...base, ...fields }),
  };
};
