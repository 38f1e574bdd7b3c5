/**
 * Tests never reach the internet: test/setup.ts blocks every connection that is not to loopback.
 * This proves the block holds on this Node version with the pinned test dependencies, for each
 * way the product sends requests: the API client's own undici Agent, undici's global dispatcher,
 * the global `fetch` (Octokit) and node:http.
 */
import { get } from 'node:http';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';

const blocked = /Disallowed net connect|not allowed/i;
const failure = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'connected',
    (e: unknown) => {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : '';
      return `${String(e)} ${cause}`;
    },
  );

describe('the test network guard', () => {
  it('refuses a public address through an undici Agent of its own (the API client)', async () => {
    const agent = new Agent();
    expect(await failure(request('http://93.184.216.34/', { dispatcher: agent }))).toMatch(blocked);
    await agent.close();
  });

  it('refuses a public address through the global dispatcher and fetch', async () => {
    expect(await failure(request('http://93.184.216.34/'))).toMatch(blocked);
    expect(await failure(fetch('https://example.com/'))).toMatch(blocked);
  });

  it('refuses a public address through node:http', async () => {
    const result = await failure(
      new Promise((resolve, reject) => get('http://93.184.216.34/', resolve).on('error', reject)),
    );
    expect(result).toMatch(blocked);
  });
});
