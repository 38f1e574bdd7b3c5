/**
 * Each kind's in-place edit on the `examples/` files: a value changed outside git (here: the same
 * source applying an edited copy, which is what a UI edit leaves live) is proposed back by editing
 * the manifest in place; the edited repository then plans nothing, and only the edited lines changed.
 */
import { readFileSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { Plan } from '../../../src/core/model.js';
import type { SyncConfig } from '../../../src/engine/config.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { reconcile } from '../../../src/engine/reconcile.js';
import { proposeDrift } from '../../../src/drift/proposal.js';
import { KIND_HANDLERS } from '../../../src/kinds/registry.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { removeDir, syncConfig, tempDir } from '../../engine/helpers.js';
import { EXAMPLES } from '../../e2e/harness.js';

const API_KEY = 'drift-round-trip-key-0123456789';
const SOURCE = 'example-catalog';

/** One edit per kind, made to the example file as a UI edit would leave the live object. */
const EDITS: { kind: string; id: string; file: string; from: string; to: string }[] = [
  {
    kind: 'entity',
    id: 'payments-api',
    file: '.cortex/catalog/payments-api.yaml',
    from: 'cost-center: CC-668',
    to: 'cost-center: CC-999',
  },
  {
    kind: 'entity',
    id: 'platform-team',
    file: '.cortex/teams/platform-team.yaml',
    from: 'email: grace@example.com',
    to: 'email: grace.h@example.com',
  },
  {
    kind: 'entity',
    id: 'payments-domain',
    file: '.cortex/domains/payments-domain.yaml',
    from: 'description: Everything that moves money.',
    to: 'description: Everything that moves money, and refunds.',
  },
  {
    kind: 'entity',
    id: 'inventory-service',
    file: 'services/inventory/cortex.yaml',
    from: 'x-cortex-groups: [tier-1, lang-go]',
    to: 'x-cortex-groups: [tier-1, lang-rust]',
  },
  {
    kind: 'entity-type',
    id: 'database',
    file: '.cortex/entity-types/database.yaml',
    from: 'description: A managed database instance.',
    to: 'description: A managed database.',
  },
  {
    kind: 'catalog-page',
    id: 'databases',
    file: '.cortex/catalog-pages/databases.yaml',
    from: 'name: Databases',
    to: 'name: All databases',
  },
  {
    kind: 'scaffolder-template',
    id: 'go-service',
    file: '.cortex/scaffolders/go-service.yaml',
    from: 'name: Go service',
    to: 'name: Go HTTP service',
  },
  {
    kind: 'scorecard',
    id: 'payments-readiness',
    file: '.cortex/scorecards/payments-readiness.yaml',
    from: 'name: Payments readiness',
    to: 'name: Payments readiness bar',
  },
  {
    kind: 'initiative',
    id: 'Payments production readiness',
    file: '.cortex/initiatives/payments-production-readiness.yaml',
    from: 'description: Bring every payments service to Gold before the holiday freeze.',
    to: 'description: Gold before the freeze.',
  },
  {
    kind: 'dependency',
    id: 'checkout-web→auth-service',
    file: '.cortex/dependencies/checkout-web.yaml',
    from: "description: Checks the shopper's session.",
    to: 'description: Checks the session.',
  },
];

let emulator: RunningEmulator;
let client: ApiClient;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, rateLimitPerMinute: 0 });
  client = createApiClient({ baseUrl: emulator.url, apiKey: API_KEY, maxAttempts: 1 });
  dir = await tempDir();
  await cp(EXAMPLES, dir, { recursive: true });
});
afterAll(async () => {
  await emulator.stop();
  await removeDir(dir);
});

const config = (): SyncConfig => syncConfig({ dir, sourceId: SOURCE, baseUrl: emulator.url, prune: false });

const run = async (mode: 'plan' | 'apply'): Promise<Plan> => {
  const result = await reconcile({ config: config(), mode }, createEngineContext(client));
  if (result.status === 'invalid') throw new Error(JSON.stringify(result.diagnostics));
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return result.plan;
};

const pending = (plan: Plan) =>
  plan.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.kind}/${c.id}`);

describe("drift proposed back by editing each kind's example manifest in place", () => {
  it.each(EDITS)('$kind $id: edit to live, then plan 0', async (edit) => {
    await run('apply');
    const path = join(dir, edit.file);
    const original = await readFile(path, 'utf8');
    expect(original).toContain(edit.from);
    // The value changed outside git: live now holds the edited value, git the original.
    await writeFile(path, original.replace(edit.from, edit.to));
    await run('apply');
    await writeFile(path, original);
    const drifted = await run('plan');
    expect(pending(drifted)).toEqual([`update ${edit.kind}/${edit.id}`]);

    const proposal = proposeDrift({
      plan: drifted,
      sourceId: SOURCE,
      kinds: KIND_HANDLERS,
      readText: (file) => ({ text: readFileSync(join(dir, file), 'utf8') }),
      now: Date.now(),
    });
    expect(proposal.refused).toEqual([]);
    expect(proposal.objects).toEqual([{ kind: edit.kind, id: edit.id, way: 'changed', file: edit.file }]);
    expect(proposal.files.map((f) => f.path)).toEqual([edit.file]);
    const proposed = proposal.files[0]?.text ?? '';
    // Exactly the edited value changed: every other line (comments included) is byte-identical.
    expect(proposed).toBe(original.replace(edit.from, edit.to));
    await writeFile(path, proposed);
    expect(pending(await run('plan'))).toEqual([]);
    await writeFile(path, original);
    await run('apply');
  });

  it('an object deleted outside git (confirmed gone by its read) is proposed as its file removed', async () => {
    await run('apply');
    const deleted = await fetch(`${emulator.url}/api/v1/catalog-pages/databases`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(deleted.ok).toBe(true);
    const drifted = await run('plan');
    expect(pending(drifted)).toEqual(['create catalog-page/databases']);
    const proposal = proposeDrift({
      plan: drifted,
      sourceId: SOURCE,
      kinds: KIND_HANDLERS,
      readText: (file) => ({ text: readFileSync(join(dir, file), 'utf8') }),
      now: Date.now(),
    });
    expect(proposal.objects).toEqual([
      { kind: 'catalog-page', id: 'databases', way: 'removed', file: '.cortex/catalog-pages/databases.yaml' },
    ]);
    expect(proposal.files).toEqual([{ path: '.cortex/catalog-pages/databases.yaml' }]);
    await run('apply');
  });
});
