/** GitOps logs over HTTP: seeded through the control endpoint, read with both routes. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningEmulator } from '../src/server.js';
import { pageOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const Log = z.looseObject({ commit: z.string(), files: z.array(z.looseObject({ fileName: z.string() })) });
const log = (commit: string, dateCreated: string, files: unknown[]) => ({
  commit,
  dateCreated,
  repository: { provider: 'GITHUB', repositoryName: 'acme/catalog' },
  files,
});
const seed = async (emu: RunningEmulator, body: unknown) => {
  const r = await call(emu, 'POST', '/_emulator/gitops-logs', { key: null, body });
  expect(r.status, r.text).toBe(200);
};

describe('GitOps logs', () => {
  it('lists logs newest first, pages and filters them, and gives an entity its most recent one', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    const file = (tag: string, operation: string) => ({
      fileName: `.cortex/catalog/${tag}.yaml`,
      isPackageFile: false,
      entity: { tag, name: tag, type: 'service', operation },
    });
    await seed(emu, log('c1', '2026-01-01T00:00:00Z', [file('svc', 'CREATED')]));
    await seed(
      emu,
      log('c2', '2026-02-01T00:00:00Z', [
        file('svc', 'UPDATED'),
        { fileName: 'bad.yaml', isPackageFile: false, error: { errorType: 'YAML', message: 'bad indent' } },
      ]),
    );
    const all = bodyOf(await call(emu, 'GET', '/api/v1/gitops-logs'), pageOf('logs', Log));
    expect(all.logs.map((l) => l.commit)).toEqual(['c2', 'c1']);
    const one = bodyOf(await call(emu, 'GET', '/api/v1/gitops-logs?page=0&pageSize=1'), pageOf('logs', Log));
    expect(one).toMatchObject({ total: 2, totalPages: 2, logs: [{ commit: 'c2' }] });
    const errors = bodyOf(await call(emu, 'GET', '/api/v1/gitops-logs?errorOnly=true'), pageOf('logs', Log));
    expect(errors.logs).toMatchObject([{ commit: 'c2', files: [{ fileName: 'bad.yaml' }] }]);
    const created = bodyOf(await call(emu, 'GET', '/api/v1/gitops-logs?operation=CREATED'), pageOf('logs', Log));
    expect(created.logs.map((l) => l.commit)).toEqual(['c1']);
    expect((await call(emu, 'GET', '/api/v1/gitops-logs?operation=EXPLODED')).status).toBe(400);
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/gitops-logs')).json).toEqual([
      {
        commit: 'c2',
        dateCreated: '2026-02-01T00:00:00Z',
        fileName: '.cortex/catalog/svc.yaml',
        repository: { provider: 'GITHUB', repositoryName: 'acme/catalog' },
      },
    ]);
  });

  it('an entity without logs is a 404; an empty workspace lists none; a malformed log is refused', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/open-api', { body: descriptor('svc') });
    expect((await call(emu, 'GET', '/api/v1/catalog/svc/gitops-logs')).status).toBe(404);
    expect((await call(emu, 'GET', '/api/v1/gitops-logs')).json).toEqual({
      logs: [],
      page: 0,
      total: 0,
      totalPages: 0,
    });
    const bad = await call(emu, 'POST', '/_emulator/gitops-logs', { key: null, body: log('c', 'now', []) });
    expect(bad.status).toBe(400);
  });
});
