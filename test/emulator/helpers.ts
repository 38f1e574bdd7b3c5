/** Test helpers: a started emulator and a tiny fetch wrapper with the admin key. */
import { afterEach } from 'vitest';
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../../src/emulator/server.js';

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

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- being replaced by typed bodies
  json: any;
}

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
