/**
 * Turning an error response into a readable message (pure), redacting secrets, and the
 * "request body too large" error raised before anything is sent.
 */
import { ApiError, type ApiErrorDetails } from '../core/errors.js';
import { createRedactor, type Redactor, redactDeep } from './redact.js';

/** The API's limit on a request body (docs.cortex.io/api: "Max request body 2MB"). */
export const MAX_REQUEST_BODY_BYTES = 2 * 1024 * 1024;

const MAX_MESSAGE_CHARS = 500;
const MAX_VIOLATIONS_SHOWN = 5;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

const truncate = (value: string, max = MAX_MESSAGE_CHARS): string =>
  value.length > max ? `${value.slice(0, max - 1)}…` : value;

const joinDistinct = (first: string | undefined, second: string | undefined, separator: string): string | undefined => {
  if (first === undefined) return second;
  if (second === undefined || second === first || first.includes(second)) return first;
  return `${first}${separator}${second}`;
};

const describeViolation = (v: unknown): string | undefined => {
  if (!isRecord(v)) return text(v);
  const main = joinDistinct(text(v.title), text(v.description), ': ') ?? text(v.message);
  if (main === undefined) return undefined;
  const level = text(v.violationType);
  const where: string[] = [];
  const pointer = text(v.pointer);
  if (pointer) where.push(pointer);
  if (typeof v.startLine === 'number') where.push(`line ${v.startLine}`);
  return `${level ? `[${level}] ` : ''}${main}${where.length > 0 ? ` (at ${where.join(', ')})` : ''}`;
};

const describeViolations = (violations: readonly unknown[]): string | undefined => {
  const described = violations.map(describeViolation).filter((v): v is string => v !== undefined);
  if (described.length === 0) return undefined;
  const shown = described.slice(0, MAX_VIOLATIONS_SHOWN).join('; ');
  const more = described.length > MAX_VIOLATIONS_SHOWN ? `; …and ${described.length - MAX_VIOLATIONS_SHOWN} more` : '';
  const noun = described.length === 1 ? 'violation' : 'violations';
  return `${described.length} ${noun}: ${shown}${more}`;
};

/** What an error response said, in a form fit for one line of an error message. */
export interface ExtractedApiMessage {
  apiMessage?: string;
  requestId?: string;
}

/**
 * Reads the API's own message from an error body:
 * - vendor error `{type, message, details, httpStatus, requestId}` → "message (details)";
 * - problem+json `{title, detail}` → "title: detail";
 * - descriptor validation `{ok:false, violations:[{title, description, …}]}` → "N violations: …";
 * - plain text (a proxy's error page) → the text, collapsed to one line and shortened.
 */
export const extractApiMessage = (body: unknown): ExtractedApiMessage => {
  if (typeof body === 'string') {
    const collapsed = body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return collapsed === '' ? {} : { apiMessage: truncate(collapsed) };
  }
  if (!isRecord(body)) return {};
  const requestId = text(body.requestId);
  const parts: (string | undefined)[] = [];
  if (Array.isArray(body.violations)) parts.push(describeViolations(body.violations));
  const vendor = joinDistinct(text(body.message), text(body.details), ' — ');
  const problem = joinDistinct(text(body.title), text(body.detail), ': ');
  const type = text(body.type);
  parts.push(vendor ?? problem ?? text(body.error) ?? (type === 'about:blank' ? undefined : type));
  const message = parts.filter((p): p is string => p !== undefined).join(' — ');
  const result: ExtractedApiMessage = {};
  if (message !== '') result.apiMessage = truncate(message);
  if (requestId !== undefined) result.requestId = requestId;
  return result;
};

/** A redactor for several secrets at once (see `redact.ts`). */
const redactorOf = (secrets: readonly string[]): Redactor => {
  const each = secrets.filter((s) => s !== '').map(createRedactor);
  return (text) => each.reduce((out, redact) => redact(out), text);
};

/**
 * Replaces each secret in `value` with `[REDACTED]`: a secret shorter than 8 characters where it stands as a whole token, and (for secrets of 8 characters or
 * more) any run of 8 or more of its characters in any case, its base64 and URL-encoded forms.
 */
export const redactText = (value: string, secrets: readonly string[]): string => redactorOf(secrets)(value);

/** Deep copy of a parsed JSON value with every secret redacted from its strings (keys included). */
export const redactValue = (value: unknown, secrets: readonly string[]): unknown =>
  redactDeep(value, redactorOf(secrets));

const formatMegabytes = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(2)} MB`;

/** A request body over the API's 2 MB limit; raised before anything is sent. */
export class RequestTooLargeError extends ApiError {
  readonly bodyBytes: number;
  readonly limitBytes: number;
  constructor(
    details: Omit<ApiErrorDetails, 'attempts' | 'durationMs' | 'status'>,
    bodyBytes: number,
    limitBytes: number,
  ) {
    const apiMessage = `request body is ${formatMegabytes(bodyBytes)} (${bodyBytes} bytes), over the API's limit of ${formatMegabytes(limitBytes)}; nothing was sent`;
    super('API', { ...details, apiMessage, attempts: 0, durationMs: 0 });
    this.name = 'RequestTooLargeError';
    this.message = `${details.operation} failed: ${details.method} ${details.path} → ${apiMessage}`;
    this.bodyBytes = bodyBytes;
    this.limitBytes = limitBytes;
  }
}

/**
 * A path with a `.` or `..` segment (an id such as `..` put into a path): a URL resolves those
 * segments away, so the request would reach another endpoint than the one its operation names
 * (`DELETE /api/v1/catalog-pages/..` is `DELETE /api/v1/`). Refused before anything is sent.
 */
export class DotSegmentPathError extends ApiError {
  constructor(details: Omit<ApiErrorDetails, 'attempts' | 'durationMs' | 'status'>) {
    const apiMessage =
      'the path has a `.` or `..` segment (an id of dots only?), which would send the request to another endpoint; nothing was sent';
    super('API', { ...details, apiMessage, attempts: 0, durationMs: 0 });
    this.name = 'DotSegmentPathError';
    this.message = `${details.operation} failed: ${details.method} ${details.path} → ${apiMessage}`;
  }
}

/** Whether a path (without its query) has a segment a URL would resolve away: `.`, `..`, or them percent-encoded. */
export const hasDotSegment = (path: string): boolean =>
  path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
