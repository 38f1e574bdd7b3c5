/**
 * The key never leaves, not even in part: a server that echoes 20 characters of it, the key
 * lower-cased, base64-encoded (alone and as Basic auth) or URL-encoded, reaches no error, event or
 * body the client produces. Every produced string is searched for every 8-character piece.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { REDACTED, redactSecrets } from '../../src/api/redact.js';
import type { RequestEvent } from '../../src/api/types.js';
import { ApiError } from '../../src/core/errors.js';
import type { EngineEvent } from '../../src/engine/context.js';
import { startServer, type TestServer, virtualClock } from './helpers.js';

const KEY = 'ck_Live+Zq81xPw0/rT9vSecretKey=2024AbCdEf';

const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The echoes a careless server or proxy produces. */
const echoes = (key: string): Record<string, string> => ({
  partial: key.slice(5, 25),
  lower: key.toLowerCase(),
  upper: key.toUpperCase(),
  base64: b64(key),
  basicAuth: b64(`api:${key}`),
  basicAuthKeyFirst: b64(`${key}:`),
  urlEncoded: encodeURIComponent(key),
});

/** Every 8-character piece of the key and of every echo of it (compared in any case). */
const leakPieces = (key: string): string[] => {
  const pieces = new Set<string>();
  for (const form of [key, ...Object.values(echoes(key))]) {
    for (let i = 0; i + 8 <= form.length; i++) pieces.add(form.slice(i, i + 8).toLowerCase());
  }
  return [...pieces];
};

const leaksIn = (text: string, key: string): string[] => {
  const lower = text.toLowerCase();
  return leakPieces(key).filter((piece) => lower.includes(piece));
};

describe('redactSecrets', () => {
  it('redacts each echo, keeps the text around it, and leaves unrelated text alone', () => {
    for (const [name, echo] of Object.entries(echoes(KEY))) {
      const out = redactSecrets(`before ${echo} after`, KEY);
      expect(leaksIn(out, KEY), name).toEqual([]);
      expect(out, name).toMatch(/^before .*\[REDACTED\].* after$/);
    }
    expect(redactSecrets('list entity descriptors failed: HTTP 500', KEY)).toBe(
      'list entity descriptors failed: HTTP 500',
    );
  });

  it('redacts any run of 8 characters of the key, but not 7', () => {
    expect(redactSecrets(`x${KEY.slice(10, 18)}x`, KEY)).toBe(`x${REDACTED}x`);
    expect(redactSecrets(`x${KEY.slice(10, 17)}x`, KEY)).toBe(`x${KEY.slice(10, 17)}x`);
  });

  it('replaces a short key wherever it occurs whole', () => {
    expect(redactSecrets('token abc123 and abc123', 'abc123')).toBe(`token ${REDACTED} and ${REDACTED}`);
  });
});

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the client redacts every echo of the key', () => {
  it('in error messages, API messages, bodies, request ids, paths and events', async () => {
    const forms = Object.values(echoes(KEY));
    const clock = virtualClock();
    server = await startServer((_req, res, i) => {
      const echo = forms[i % forms.length] as string;
      const status = i % 2 === 0 ? 503 : 400;
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${echo}` });
      res.end(
        JSON.stringify({
          type: 'BAD_REQUEST',
          message: `rejected credentials ${echo}`,
          details: { [echo]: [`value ${echo}`], all: forms.join(' ') },
          requestId: `id-${echo}`,
        }),
      );
    }, clock);
    const events: EngineEvent[] = [];
    const attempts: RequestEvent[] = [];
    const client = createApiClient({
      baseUrl: server.url,
      apiKey: KEY,
      ...clock,
      events: { emit: (e) => events.push(e) },
      onRequest: (e) => attempts.push(e),
    });
    const produced: string[] = [];
    for (const [n, echo] of forms.entries()) {
      const error = await client
        .request({ operation: `read ${n}`, method: 'GET', path: `/api/v1/things/${encodeURIComponent(echo)}` })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      const api = error as ApiError;
      produced.push(api.message, String(api), api.stack ?? '', api.path, api.apiMessage ?? '');
      produced.push(JSON.stringify(api.body), api.requestId ?? '');
    }
    produced.push(JSON.stringify(events), JSON.stringify(attempts));
    await client.close();
    expect(server.received.length).toBeGreaterThanOrEqual(forms.length);
    expect(leaksIn(produced.join('\n'), KEY)).toEqual([]);
    expect(produced.join('\n')).toContain(REDACTED);
  });
});
