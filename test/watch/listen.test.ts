/**
 * The listen address: loopback unless the operator says otherwise, and every address that cannot
 * be used is an error naming the flag (or variable), the value and the problem, with exit 1.
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { parseListen } from '../../src/watch/listen.js';
import { API_KEY, CONFIG_YAML, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

let emulator: Emulator;
let root: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  root = await tempDir();
  await writeFiles(join(root, 'manifests'), { 'cortex-sync.yaml': CONFIG_YAML });
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(root);
});

/** `cortex-sync ARGS` in-process, stopped as soon as it listens; exit code and output. */
const cli = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  let out = '';
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString('utf8');
      if (out.includes('listening on ')) stop();
      done();
    },
  });
  const code = await runCli(args, {
    stdout: sink,
    stderr: sink,
    env: {
      CORTEX_API_KEY: API_KEY,
      CORTEX_BASE_URL: emulator.url,
      CORTEX_SYNC_CACHE_DIR: join(root, 'cache'),
      ...env,
    },
    cwd: root,
    untilStopped: () => stopped,
  });
  return { code, out };
};

describe('watch --listen', () => {
  it('a malformed address is an error naming the flag and the value', async () => {
    const { code, out } = await cli(['watch', '--dir', 'manifests', '--listen', '8080x']);
    expect(code).toBe(1);
    expect(out).toMatch(/--listen.*'8080x'/);
    expect(out).toContain('expected HOST:PORT');
  });

  it('a port in use is an error naming the address and the problem, not an internal error', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const { code, out } = await cli(['watch', '--dir', 'manifests', '--listen', `127.0.0.1:${port}`]);
      expect(code).toBe(1);
      expect(out).toContain(`error: --listen 127.0.0.1:${port}: the address is already in use`);
      expect(out).not.toContain('internal error');
      // The source folder was released: the same watcher starts once the port is free.
      await new Promise((resolve) => taken.close(resolve));
      const again = await cli(['watch', '--dir', 'manifests', '--listen', `127.0.0.1:${port}`]);
      expect(again.out).toContain(`listening on http://127.0.0.1:${port}`);
      expect(again.code).toBe(0);
    } finally {
      taken.close();
    }
  });

  it('CORTEX_SYNC_LISTEN sets the address when the flag is absent, and a bad one names the variable', async () => {
    const good = await cli(['watch', '--dir', 'manifests'], { CORTEX_SYNC_LISTEN: '127.0.0.1:0' });
    expect(good.out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/m);
    const bad = await cli(['watch', '--dir', 'manifests'], { CORTEX_SYNC_LISTEN: 'everywhere' });
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('error: CORTEX_SYNC_LISTEN: not an address: expected HOST:PORT');
  });

  it('without --listen or CORTEX_SYNC_LISTEN it listens on 127.0.0.1:8080 only', async () => {
    const { out } = await cli(['watch', '--dir', 'manifests']);
    // Either it listened there, or that port is taken on this machine and the error names it.
    expect(out).toMatch(
      /^listening on http:\/\/127\.0\.0\.1:8080$|error: the default listen address 127\.0\.0\.1:8080: the address is already in use/m,
    );
  });

  it('reads IPv6 in brackets, host names and :PORT, and says what is wrong with the rest', () => {
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('localhost:9090')).toEqual({ host: 'localhost', port: 9090 });
    expect(parseListen(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(() => parseListen('::1:8080')).toThrow('an IPv6 address needs brackets');
    expect(() => parseListen('8080')).toThrow('no host');
    expect(() => parseListen('127.0.0.1:65536')).toThrow("the port '65536' is not a number from 0 to 65535");
    expect(() => parseListen('127.0.0.1:-1')).toThrow('is not a number');
    expect(() => parseListen('a b:80')).toThrow("'a b' is not a host name or address");
  });
});
