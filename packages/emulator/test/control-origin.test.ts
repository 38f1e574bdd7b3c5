/**
 * The control endpoints need no key, so a page in a browser on another origin must not be able to
 * reset the emulator, mint keys or read its state; and an emulator bound beyond loopback says so.
 */
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runEmulatorCommand } from '../src/cli.js';
import { call, descriptor, start } from './helpers.js';

/** A raw request, so that `Host` can be anything (fetch does not let a caller set it). */
const raw = (
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });

describe('control endpoints refuse cross-origin requests', () => {
  it('refuses a foreign Origin, a cross-site fetch, a DNS-rebound Host and simple-request bodies, with no effect', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('keep-me') });
    const host = new URL(emu.url).host;
    const attempts: { headers: Record<string, string>; body?: string; status: number }[] = [
      { headers: { origin: 'https://evil.example' }, status: 403 },
      { headers: { origin: 'null' }, status: 403 },
      { headers: { 'sec-fetch-site': 'cross-site' }, status: 403 },
      { headers: { 'sec-fetch-site': 'same-site' }, status: 403 },
      { headers: { host: `rebound.evil.example:${new URL(emu.url).port}` }, status: 403 },
      { headers: { 'content-type': 'text/plain' }, body: '{}', status: 415 },
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b', status: 415 },
      { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--', status: 415 },
    ];
    for (const a of attempts) {
      const r = await raw(emu.url, 'POST', '/_emulator/reset', a.headers, a.body);
      expect(r.status, JSON.stringify(a.headers)).toBe(a.status);
    }
    expect(emu.state.entities.idByTag['keep-me']).toBeDefined();
    const read = await raw(emu.url, 'GET', '/_emulator/state', { origin: 'https://evil.example' });
    expect(read.status).toBe(403);
    expect(read.text).not.toContain('keep-me');
    const mint = await raw(
      emu.url,
      'POST',
      '/_emulator/api-keys',
      { 'content-type': 'text/plain', 'sec-fetch-site': 'cross-site' },
      JSON.stringify({ roles: [{ type: 'DEFAULT', role: 'ADMIN' }] }),
    );
    expect(mint.status).toBe(403);
    // Same origin, a terminal (no Origin) and localhost still work.
    expect((await raw(emu.url, 'GET', '/_emulator/health', { origin: `http://${host}` })).status).toBe(200);
    expect((await raw(emu.url, 'GET', '/_emulator/health', { 'sec-fetch-site': 'none' })).status).toBe(200);
    expect((await raw(emu.url, 'GET', '/_emulator/health', { host: 'localhost' })).status).toBe(200);
    expect((await raw(emu.url, 'POST', '/_emulator/reset', {})).status).toBe(200);
    expect(emu.state.entities.idByTag['keep-me']).toBeUndefined();
  });
});

describe('the emulator command on a non-loopback address', () => {
  const startCommand = async (host: string) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    try {
      const emu = await runEmulatorCommand({ port: 0, host }, { stdout, stderr, env: {} });
      await emu.stop();
    } catch {
      // 192.0.2.1 (a documentation address) is on no interface here: tests never listen beyond loopback.
    }
    return err;
  };

  it('warns on stderr when asked to bind beyond loopback, and says nothing on loopback', async () => {
    expect(await startCommand('192.0.2.1')).toMatch(/warning: the emulator listens on 192\.0\.2\.1, not on loopback/);
    expect(await startCommand('127.0.0.1')).toBe('');
  });
});
