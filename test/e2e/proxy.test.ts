/**
 * A corporate proxy: the CLI sends every request to the API through `HTTP_PROXY` (the emulator is
 * plain http; `HTTPS_PROXY` for https), except hosts `NO_PROXY` names. The proxy sees the key only
 * in the `Authorization` header it forwards; its credentials (in the proxy URL) are never printed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestProxy, type TestProxy } from '../support/proxy.js';
import { API_KEY, cli, copyExamples, type Emulator, removeDir, startTestEmulator } from './harness.js';

let emulator: Emulator;
let proxy: TestProxy;
let dir: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  dir = await copyExamples();
});
afterEach(async () => {
  await proxy?.stop();
  await emulator.stop();
  await removeDir(dir);
});

const plan = (env: NodeJS.ProcessEnv) => cli(['plan', '--dir', '.'], { emulator, cwd: dir, env });
const emulatorPort = () => new URL(emulator.url).port;
/** Lines of the proxy's log that hold the key, other than the forwarded `Authorization` header. */
const keyOutsideAuthorization = (text: string) =>
  text.split('\n').filter((line) => line.includes(API_KEY) && line !== `authorization: Bearer ${API_KEY}`);

describe('HTTP_PROXY', () => {
  for (const name of ['HTTP_PROXY', 'http_proxy']) {
    it(`${name}: every request of a plan goes through the proxy; the key only in the Authorization header`, async () => {
      proxy = await startTestProxy();
      const run = await plan({ [name]: proxy.url });
      expect(run.stderr).not.toContain('failed');
      expect(run.code).toBe(0);
      expect(emulator.requests.length).toBeGreaterThan(0);
      // Forwarded (an http target): one logged request per request the emulator answered.
      const forwarded = proxy.log.filter((e) => e.target.startsWith(`${emulator.url}/api/v1/`));
      expect(forwarded).toHaveLength(emulator.requests.length);
      expect(proxy.logText()).toContain(`authorization: Bearer ${API_KEY}`);
      expect(keyOutsideAuthorization(proxy.logText())).toEqual([]);
      expect(run.stdout + run.stderr).not.toContain(API_KEY);
    });
  }

  it('a proxy URL with credentials authenticates to the proxy and is never printed', async () => {
    proxy = await startTestProxy({ credentials: { user: 'cortex', password: 'pr0xy-s3cret' } });
    const ok = await plan({ HTTP_PROXY: `http://cortex:pr0xy-s3cret@127.0.0.1:${proxy.port}` });
    expect(ok.code).toBe(0);
    expect(proxy.log.length).toBeGreaterThan(0);
    expect(ok.stdout + ok.stderr).not.toContain('pr0xy-s3cret');
  });

  it('a proxy that answers 407 fails the plan naming the proxy’s refusal, never its password', async () => {
    proxy = await startTestProxy({ credentials: { user: 'cortex', password: 'right-one' } });
    const run = await plan({ HTTP_PROXY: `http://cortex:wr0ng-s3cret@127.0.0.1:${proxy.port}` });
    expect(run.code).toBe(1);
    expect(emulator.requests).toEqual([]);
    expect(run.stderr).toContain('HTTP 407');
    expect(run.stderr).toContain('the proxy (HTTP_PROXY) refused the credentials');
    expect(run.stdout + run.stderr).not.toContain('wr0ng-s3cret');
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
  });

  it('a proxy that is down: the error says the request went to the proxy, never its password', async () => {
    proxy = await startTestProxy();
    await proxy.stop();
    const run = await plan({
      HTTP_PROXY: `http://cortex:d0wn-s3cret@127.0.0.1:${proxy.port}`,
      CORTEX_SYNC_TIMEOUT: '2',
    });
    expect(run.code).toBe(1);
    expect(emulator.requests).toEqual([]);
    expect(run.stderr).toContain(
      `network error: through the proxy (HTTP_PROXY): connect ECONNREFUSED 127.0.0.1:${proxy.port}`,
    );
    expect(run.stdout + run.stderr).not.toContain('d0wn-s3cret');
  });

  it('a proxy URL that does not parse is a configuration error naming the variable, not its value', async () => {
    const run = await plan({ HTTPS_PROXY: 'http://user:pa ss@[bad' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('HTTPS_PROXY: not a valid proxy URL');
    expect(run.stderr).not.toContain('pa ss');
  });

  it('a loopback API is never sent to a proxy on another host (that proxy’s 127.0.0.1 is not ours)', async () => {
    proxy = await startTestProxy();
    const run = await plan({ HTTP_PROXY: 'http://192.0.2.1:3128' });
    expect(run.code).toBe(0);
    expect(emulator.requests.length).toBeGreaterThan(0);
  });
});

describe('NO_PROXY', () => {
  const bypass = ['127.0.0.1', '127.0.0.1:PORT', '*', '*.0.0.1', 'localhost, 127.0.0.1', 'no_proxy'];
  for (const value of bypass) {
    it(`${value} sends the requests past the proxy`, async () => {
      proxy = await startTestProxy();
      const env: NodeJS.ProcessEnv =
        value === 'no_proxy'
          ? { HTTP_PROXY: proxy.url, no_proxy: '127.0.0.1' }
          : { HTTP_PROXY: proxy.url, NO_PROXY: value.replace('PORT', emulatorPort()) };
      const run = await plan(env);
      expect(run.code).toBe(0);
      expect(emulator.requests.length).toBeGreaterThan(0);
      expect(proxy.log).toEqual([]);
    });
  }

  it('another port of the same host does not', async () => {
    proxy = await startTestProxy();
    const run = await plan({ HTTP_PROXY: proxy.url, NO_PROXY: `127.0.0.1:${Number(emulatorPort()) + 1}` });
    expect(run.code).toBe(0);
    expect(proxy.log.length).toBe(emulator.requests.length);
  });
});

it('--help names the proxy variables', async () => {
  const run = await cli(['--help'], { cwd: dir });
  for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'])
    expect(run.stdout).toMatch(new RegExp(`^  .*\\b${name}\\b`, 'm'));
});
