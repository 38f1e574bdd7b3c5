import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiClient, emptyClientStats } from '../../../../src/api/types.js';
import { ApiError } from '../../../../src/core/errors.js';
import { type RunningEmulator, startEmulator } from '../../../../packages/emulator/src/server.js';
import { scaffolderTemplateKind as kind } from '../../../../src/kinds/scaffolder-template/index.js';
import type {
  LiveScaffolderTemplate,
  ScaffolderTemplateManifest,
} from '../../../../src/kinds/scaffolder-template/schema.js';
import { removalOf } from '../../../kinds/kind-change.js';
import { applyContext, desiredOf, planAndApply, planOf, testClient } from '../../../kinds/initiative/harness.js';

let emulator: RunningEmulator;
let client: ApiClient;

const manifest = (tag: string, extra = ''): string =>
  `tag: ${tag}
name: Template ${tag}
type: COOKIECUTTER
repoLocator:
  type: GITHUB
  org: acme
  repoName: ${tag}-template
${extra}`;

const DIR = '.cortex/scaffolders';
const stored = () => emulator.state.scaffolders.items;
const putsToScaffolders = (): number =>
  emulator.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/api/v1/scaffolders')).length;

beforeEach(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0 });
  client = testClient(emulator.url, emulator.apiKey);
});
afterEach(async () => {
  await emulator.stop();
});

describe('Scaffolder template kind against the emulator', () => {
  it('creates and updates with the upsert POST only: no PUT is ever sent', async () => {
    const desired = desiredOf(kind, [manifest('python'), manifest('go', 'labels: [backend]\nshowReadme: true')], DIR);
    expect((await planOf(kind, client, desired)).map((c) => c.action)).toEqual(['create', 'create']);
    expect(await planAndApply(kind, client, desired)).toEqual([]);
    expect(
      stored()
        .map((t) => t.tag)
        .sort(),
    ).toEqual(['go', 'python']);
    // Read back with the server's defaults filled in, it equals the manifests.
    expect((await planOf(kind, client, desired)).map((c) => c.action)).toEqual(['noop', 'noop']);

    // A field dropped from a manifest is no longer compared (its server value is the server's): no write.
    const changed = desiredOf(kind, [manifest('python', 'description: now described'), manifest('go')], DIR);
    expect((await planOf(kind, client, changed)).map((c) => c.action)).toEqual(['update', 'noop']);
    expect(await planAndApply(kind, client, changed)).toEqual([]);
    expect(stored().find((t) => t.tag === 'go')).toMatchObject({ labels: ['backend'], showReadme: true });
    expect(stored().find((t) => t.tag === 'python')?.description).toBe('now described');
    expect((await planOf(kind, client, changed)).map((c) => c.action)).toEqual(['noop', 'noop']);

    expect(putsToScaffolders()).toBe(0);
    expect(emulator.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/scaffolders')).toHaveLength(3);
  });

  it('an update whose template vanished meanwhile recreates it instead of failing (no PUT to a missing tag)', async () => {
    const desired = desiredOf(kind, [manifest('python')], DIR);
    await planAndApply(kind, client, desired);
    const [update] = await planOf(kind, client, desiredOf(kind, [manifest('python', 'showReadme: true')], DIR));
    emulator.state.scaffolders.items.length = 0; // deleted in the UI between plan and apply
    await kind.write.apply(update!, applyContext(client));
    expect(stored()).toEqual([expect.objectContaining({ tag: 'python', showReadme: true })]);
    expect(putsToScaffolders()).toBe(0);
  });

  it('a create applied twice, or retried after failures, leaves one template', async () => {
    const desired = desiredOf(kind, [manifest('python')], DIR);
    const [create] = await planOf(kind, client, desired);
    await kind.write.apply(create!, applyContext(client));
    await kind.write.apply(create!, applyContext(client));
    emulator.setFaults({ failRate: 0.3, lostResponseRate: 0.3 });
    for (let i = 0; i < 5; i++) await kind.write.apply(create!, applyContext(client)).catch(() => undefined);
    emulator.setFaults({});
    expect(stored().map((t) => t.tag)).toEqual(['python']);
  });

  it('deletes by tag, and deleting one already gone succeeds', async () => {
    await planAndApply(kind, client, desiredOf(kind, [manifest('old')], DIR));
    const [live] = await kind.live.fetch({ client, desired: [], managedIds: ['old'], readBefore: [] });
    expect(live?.serverId).toBe(stored()[0]?.id);
    const del = removalOf<ScaffolderTemplateManifest, LiveScaffolderTemplate>(live!);
    await kind.write.apply(del, applyContext(client));
    await kind.write.apply(del, applyContext(client));
    expect(stored()).toEqual([]);
  });

  it('a 403 on a write says the Scaffolder API is not enabled (or the key lacks the permission)', async () => {
    emulator.addApiKey({ value: 'no-scaffolder-key', permissions: ['EDIT_ENTITIES'] });
    const limited = testClient(emulator.url, 'no-scaffolder-key');
    const errors = await planAndApply(kind, limited, desiredOf(kind, [manifest('python')], DIR));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ApiError);
    expect(errors[0]?.message).toMatch(/Scaffolder API not enabled for this workspace/);
    expect(errors[0]?.message).not.toContain('no-scaffolder-key');
    expect(stored()).toEqual([]);
  });
});

describe('Scaffolder API switched off for the workspace (403 on the list)', () => {
  const forbidden: ApiClient = {
    request: () => Promise.reject(new Error('not used')),
    close: async () => {},
    stats: emptyClientStats,
    paginate: (req) =>
      Promise.reject(
        new ApiError('API', {
          operation: req.operation,
          method: req.method,
          path: req.path,
          status: 403,
          apiMessage: 'Forbidden',
          attempts: 1,
          durationMs: 1,
        }),
      ),
  };

  it('does not fail a sync that declares and manages no template', async () => {
    expect(await kind.live.fetch({ client: forbidden, desired: [], managedIds: [], readBefore: [] })).toEqual([]);
  });

  it('fails with a clear message when templates are declared', async () => {
    const desired = desiredOf(kind, [manifest('python')], DIR);
    await expect(kind.live.fetch({ client: forbidden, desired, managedIds: [], readBefore: [] })).rejects.toThrow(
      /Scaffolder API not enabled for this workspace.*Forbidden/,
    );
  });
});
