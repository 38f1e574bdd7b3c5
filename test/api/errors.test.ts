import { describe, expect, it } from 'vitest';
import { extractApiMessage, redactText, redactValue } from '../../src/api/errors.js';
import { decodeBody, normalizeBaseUrl, pathWithQuery, serializeBody } from '../../src/api/request-parts.js';

describe('extractApiMessage', () => {
  it('reads the vendor error body', () => {
    const body = {
      type: 'NOT_FOUND',
      message: 'Entity not found',
      details: 'no entity payments-api',
      httpStatus: 404,
      requestId: 'r-1',
    };
    expect(extractApiMessage(body)).toEqual({
      apiMessage: 'Entity not found — no entity payments-api',
      requestId: 'r-1',
    });
    expect(extractApiMessage({ type: 'BAD_REQUEST', message: 'Bad', details: 'Bad' }).apiMessage).toBe('Bad');
  });

  it('reads problem+json', () => {
    const body = {
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Rate limit exceeded',
      retryAfter: 17,
    };
    expect(extractApiMessage(body).apiMessage).toBe('Too Many Requests: Rate limit exceeded');
    expect(extractApiMessage({ type: 'about:blank', status: 500 }).apiMessage).toBeUndefined();
  });

  it('turns descriptor violations into a readable list', () => {
    const body = {
      ok: false,
      violations: [
        {
          title: 'Missing tag',
          description: 'x-cortex-tag is required',
          violationType: 'MUST',
          pointer: '/info',
          startLine: 3,
        },
        { title: 'Unknown owner', description: 'team-x does not exist', violationType: 'MUST' },
      ],
    };
    expect(extractApiMessage(body).apiMessage).toBe(
      '2 violations: [MUST] Missing tag: x-cortex-tag is required (at /info, line 3); [MUST] Unknown owner: team-x does not exist',
    );
    const many = { ok: false, violations: Array.from({ length: 8 }, (_, i) => ({ title: `v${i}` })) };
    expect(extractApiMessage(many).apiMessage).toBe('8 violations: v0; v1; v2; v3; v4; …and 3 more');
  });

  it('collapses a text or HTML error page to one short line', () => {
    expect(extractApiMessage('<html><body><h1>502 Bad Gateway</h1>\n</body></html>').apiMessage).toBe(
      '502 Bad Gateway',
    );
    expect(extractApiMessage('x'.repeat(2000)).apiMessage?.length).toBe(500);
    expect(extractApiMessage(undefined)).toEqual({});
    expect(extractApiMessage('   ')).toEqual({});
  });
});

describe('redaction', () => {
  it('removes a secret from text and from nested JSON', () => {
    expect(redactText('Bearer abc123 and abc123', ['abc123'])).toBe('Bearer [REDACTED] and [REDACTED]');
    expect(redactValue({ a: ['key=abc123'], abc123: 1, n: 2 }, ['abc123'])).toEqual({
      a: ['key=[REDACTED]'],
      '[REDACTED]': 1,
      n: 2,
    });
  });
});

describe('request parts', () => {
  it('normalises base URLs and keeps a path prefix', () => {
    expect(normalizeBaseUrl('https://api.getcortexapp.com/')).toBe('https://api.getcortexapp.com');
    expect(normalizeBaseUrl('https://cortex.example.com/gateway//')).toBe('https://cortex.example.com/gateway');
    expect(() => normalizeBaseUrl('ftp://x')).toThrow(/http or https/);
    expect(() => normalizeBaseUrl('not a url')).toThrow(/not a valid URL/);
    expect(() => normalizeBaseUrl('https://user:pw@x.example')).toThrow(/credentials/);
  });

  it('sends arrays as repeated keys and leaves undefined out', () => {
    expect(
      pathWithQuery('/api/v1/catalog', { types: ['service', 'team'], yaml: false, page: 0, skip: undefined }),
    ).toBe('/api/v1/catalog?types=service&types=team&yaml=false&page=0');
    expect(pathWithQuery('/api/v1/x?a=1', { b: 'c d' })).toBe('/api/v1/x?a=1&b=c+d');
  });

  it('serialises bodies and decodes responses by content type', () => {
    expect(serializeBody({ body: { a: 1 } })).toEqual({
      payload: '{"a":1}',
      contentType: 'application/json',
      bytes: 7,
    });
    expect(
      serializeBody({ body: 'openapi: 3.0.1', contentType: 'application/openapi;charset=UTF-8' })?.contentType,
    ).toBe('application/openapi;charset=UTF-8');
    expect(serializeBody({ body: 'é' })?.bytes).toBe(2);
    expect(decodeBody('{"a":1}', 'application/problem+json')).toEqual({ a: 1 });
    expect(decodeBody('{"a":1}', 'application/json; charset=utf-8')).toEqual({ a: 1 });
    expect(decodeBody('{"a":1}', 'text/plain')).toBe('{"a":1}');
    expect(decodeBody('not json', 'application/json')).toBe('not json');
    expect(decodeBody('', 'application/json')).toBeUndefined();
  });
});
