/**
 * Pure pieces of an HTTP exchange: base URL normalisation, path + query string, request body
 * serialisation, response header and body decoding.
 */
import { ConfigError } from '../core/errors.js';
import type { ApiRequest, QueryValue } from './types.js';

export const DEFAULT_BASE_URL = 'https://api.getcortexapp.com';

/**
 * Validates a base URL and returns it without trailing slashes (a path prefix such as
 * `https://cortex.example.com/gateway` is kept). Credentials in the URL are refused: the API key
 * is the only credential, and it travels in a header.
 */
export const normalizeBaseUrl = (baseUrl: string): string => {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError('The API base URL is not a valid URL (expected e.g. https://api.getcortexapp.com)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`The API base URL must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError('The API base URL must not contain credentials; pass the API key separately');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError('The API base URL must not contain a query string or fragment');
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (/\/api\/v1$/i.test(path)) {
    const suggested = `${url.origin}${path.replace(/\/api\/v1$/i, '')}`;
    throw new ConfigError(
      `The API base URL ${url.origin}${path} ends in /api/v1, which cortex-sync adds to every request itself (each would go to …/api/v1/api/v1/… and fail with 404): use ${suggested}`,
    );
  }
  return `${url.origin}${path}`;
};

const appendQuery = (params: URLSearchParams, key: string, value: QueryValue): void => {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) params.append(key, String(item));
    return;
  }
  params.append(key, String(value));
};

/** The request's path with its query string (arrays as repeated keys, `undefined` left out). */
export const pathWithQuery = (path: string, query: ApiRequest['query']): string => {
  if (!path.startsWith('/')) throw new ConfigError(`API paths must start with "/": ${path}`);
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) appendQuery(params, key, value);
  const qs = params.toString();
  if (qs === '') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${qs}`;
};

export interface SerializedBody {
  payload: string;
  contentType: string;
  bytes: number;
}

/** A string body is sent as is (`contentType`, else text/plain); anything else as JSON. */
export const serializeBody = (req: Pick<ApiRequest, 'body' | 'contentType'>): SerializedBody | undefined => {
  if (req.body === undefined) return undefined;
  if (typeof req.body === 'string') {
    const contentType = req.contentType ?? 'text/plain;charset=UTF-8';
    return { payload: req.body, contentType, bytes: Buffer.byteLength(req.body, 'utf8') };
  }
  const payload = JSON.stringify(req.body);
  if (payload === undefined) throw new TypeError('request body cannot be serialised to JSON');
  return { payload, contentType: req.contentType ?? 'application/json', bytes: Buffer.byteLength(payload, 'utf8') };
};

/** Lower-case header names; repeated headers joined with ", ". */
export const normalizeHeaders = (headers: Record<string, string | string[] | undefined>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
};

/** `application/json`, `application/problem+json`, `application/vnd.x+json`, with any parameters. */
const isJsonContentType = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^[\w.-]+\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType.trim());

/** Parsed JSON when the content type says JSON (the text if it does not parse), else the text; empty → undefined. */
export const decodeBody = (raw: string, contentType: string | undefined): unknown => {
  if (raw.trim() === '') return undefined;
  if (!isJsonContentType(contentType)) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
};
