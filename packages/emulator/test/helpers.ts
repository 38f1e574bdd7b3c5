/** Test helpers: a started emulator, a tiny fetch wrapper with the admin key, and typed reads of its bodies. */
import { afterEach } from 'vitest';
import { z } from 'zod';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../src/server.js';

const running: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.stop()));
});

/** Starts an emulator that is stopped after the test. */
export const start = async (options: EmulatorOptions = {}): Promise<RunningEmulator> => {
  const emu = await startEmulator(options);
  running.push(emu);
  return emu;
};

/** An emulator answer. `json` is the parsed body (undefined when empty or not JSON); read fields with `bodyOf`. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/**
 * The reply's JSON body, checked against `schema` and typed by it. Throws (failing the test) with
 * the status, the body and zod's account of what did not match. Use `z.looseObject` schemas so the
 * value keeps every field of the body, and compare whole bodies on `reply.json` directly.
 */
export const bodyOf = <S extends z.ZodType>(reply: Reply, schema: S): z.output<S> => {
  const parsed = schema.safeParse(reply.json);
  if (parsed.success) return parsed.data;
  throw new Error(`unexpected body (status ${reply.status}): ${reply.text}\n${z.prettifyError(parsed.error)}`);
};

/** Sends a request; `body` strings are sent as is, objects as JSON. */
export const call = async (
  emu: { url: string; apiKey: string },
  method: string,
  path: string,
  opts: { body?: unknown; contentType?: string; key?: string | null } = {},
): Promise<Reply> => {
  const headers: Record<string, string> = {};
  const key = opts.key === undefined ? emu.apiKey : opts.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] =
      opts.contentType ?? (typeof opts.body === 'string' ? 'application/openapi;charset=UTF-8' : 'application/json');
  }
  const res = await fetch(`${emu.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
};

/** A minimal valid descriptor. */
export const descriptor = (tag: string, info: Record<string, unknown> = {}): string =>
  JSON.stringify({ openapi: '3.0.1', info: { title: `Title of ${tag}`, 'x-cortex-tag': tag, ...info } });
