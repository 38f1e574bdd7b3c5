/**
 * Request-body helpers shared by the initiatives, catalog-pages, scaffolders and scorecards
 * modules: read a JSON (or YAML) body, validate it with a zod schema, and turn every problem into
 * the vendor's 400 `ErrorResponse`.
 */
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { type EmulatorRequest, type EmulatorResponse, errorResponse } from '../contract.js';

/** Media types accepted as YAML bodies (scaffolder templates accept YAML as well as JSON). */
const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

export type BodyResult<T> = { ok: true; value: T } | { ok: false; response: EmulatorResponse };

/** One line per zod issue: `emphasizedRules.0.expression: Invalid input: expected string, received undefined`. */
export const describeIssues = (error: z.ZodError): string =>
  error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(body)'}: ${issue.message}`)
    .join('; ');

/**
 * Parses the body (JSON, or YAML when `allowYaml` and the content type says so) and validates it.
 * A wrong content type is a 415, unparsable text or a schema violation a 400.
 */
export const readBody = <T>(
  req: EmulatorRequest,
  schema: z.ZodType<T>,
  options: { allowYaml?: boolean } = {},
): BodyResult<T> => {
  const isYaml = options.allowYaml === true && YAML_TYPES.has(req.contentType);
  if (!isYaml && req.contentType !== 'application/json') {
    return {
      ok: false,
      response: errorResponse(415, 'BAD_REQUEST', `Unsupported content type '${req.contentType || '(none)'}'`),
    };
  }
  let raw: unknown;
  try {
    raw = isYaml ? parseYaml(req.rawBody) : JSON.parse(req.rawBody);
  } catch {
    return { ok: false, response: errorResponse(400, 'BAD_REQUEST', 'Malformed request body') };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      response: errorResponse(400, 'BAD_REQUEST', `Invalid request body: ${describeIssues(parsed.error)}`),
    };
  }
  return { ok: true, value: parsed.data };
};

/**
 * Parses a boolean query parameter the way Spring binds one (`true`/`True`/`1`/`yes`/`on`, and
 * their opposites), or `fallback` when absent; `null` for any other value (the caller answers 400).
 */
export const booleanQuery = (query: URLSearchParams, name: string, fallback: boolean): boolean | null => {
  const value = query.get(name);
  if (value === null || value === '') return fallback;
  const lower = value.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  return null;
};
