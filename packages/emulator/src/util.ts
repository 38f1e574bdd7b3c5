/**
 * Small helpers shared by the emulator's server and resource modules: a seeded PRNG, vendor-looking
 * ids, a list order that is deliberately not insertion order, query parsing, and body parsing.
 */
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { EmulatorRequest, EmulatorResponse } from './contract.js';
import { errorResponse } from './contract.js';

/** A JSON object (what descriptors, bodies and stored records are made of). */
export type JsonObject = { [key: string]: unknown };

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). Same seed, same sequence. */
export const createPrng = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/** `prefix` + 16 lower-case hex characters drawn from `random`. */
export const randomHexId = (prefix: string, random: () => number): string => {
  let hex = '';
  for (let i = 0; i < 16; i++) hex += Math.floor(random() * 16).toString(16);
  return prefix + hex;
};

/**
 * The value a record used as a dictionary holds under `key`: an own property only, so that a key
 * from a request (`__proto__`, `constructor`, `toString`) never reads the prototype.
 */
export const own = <T>(record: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** Stores `value` under `key` as an own property (`record['__proto__'] = …` would set the prototype instead). */
export const putOwn = <T>(record: Record<string, T>, key: string, value: T): T => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  return value;
};

/** A UUID (version 4 form) from a source of 16-hex-character ids such as `EmulatorEnv.newId`. */
export const uuidFrom = (newId: (prefix: string) => string): string => {
  const hex = newId('') + newId('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** FNV-1a 32-bit hash of a string. */
export const fnv1a = (text: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
};

/**
 * Sorts a copy of `items` by a hash of their key: stable across calls, unrelated to insertion or
 * alphabetical order, so clients cannot come to depend on either.
 */
export const hashOrder = <T>(items: Iterable<T>, key: (item: T) => string): T[] =>
  [...items]
    .map((item) => ({ item, k: key(item) }))
    .sort((a, b) => fnv1a(a.k) - fnv1a(b.k) || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((x) => x.item);

/** A boolean query flag (`true`/`True`/`1` are true); `fallback` when absent. */
export const queryFlag = (query: URLSearchParams, name: string, fallback: boolean): boolean => {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  return raw.toLowerCase() === 'true' || raw === '1';
};

/**
 * An array query parameter given as repeated keys (`types=a&types=b`), comma-joined (`types=a,b`),
 * or with brackets (`types[]=a`). Empty when absent.
 */
export const queryList = (query: URLSearchParams, name: string): string[] =>
  [...query.getAll(name), ...query.getAll(`${name}[]`)]
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** Parses a JSON body; an error response when it is not JSON (or not an object, if required). */
export const parseJsonBody = (
  req: EmulatorRequest,
  opts: { object?: boolean } = {},
): { ok: true; value: unknown } | { ok: false; response: EmulatorResponse } => {
  if (req.rawBody.trim() === '')
    return { ok: false, response: errorResponse(400, 'BAD_REQUEST', 'Request body is required') };
  try {
    const value: unknown = JSON.parse(req.rawBody);
    if (opts.object && !isObject(value)) {
      return { ok: false, response: errorResponse(400, 'BAD_REQUEST', 'Request body must be a JSON object') };
    }
    return { ok: true, value };
  } catch {
    return { ok: false, response: errorResponse(400, 'BAD_REQUEST', 'Malformed JSON request body') };
  }
};

/** Parses a YAML (or JSON) text body; the error carries a 1-based line when known. */
export const parseYamlText = (
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string; line: number } => {
  try {
    return { ok: true, value: parseYaml(text, { uniqueKeys: false }) as unknown };
  } catch (err) {
    if (err instanceof YAMLParseError) {
      return { ok: false, message: err.message.split('\n')[0] ?? 'Invalid YAML', line: err.linePos?.[0]?.line ?? 1 };
    }
    return { ok: false, message: 'Invalid YAML', line: 1 };
  }
};

/** ISO-8601 timestamp without milliseconds, like the vendor's (`2026-07-01T12:00:00Z`). */
export const isoSeconds = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/** Deep clone of JSON data. */
export const cloneJson = <T>(value: T): T => structuredClone(value);
