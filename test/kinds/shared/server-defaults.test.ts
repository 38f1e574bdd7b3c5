/**
 * No guessed server values: where the API stores something other than what was sent (an icon it
 * does not know, defaults for omitted fields), the next plan is empty whatever the server chose.
 * The emulator's stored state is rewritten after the apply to a default none of the code knows.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { DesiredObject } from '../../../src/core/model.js';
import { buildPlan } from '../../../src/core/plan.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { catalogPageKind } from '../../../src/kinds/catalog-page/index.js';
import { entityTypeKind } from '../../../src/kinds/entity-type/index.js';
import { initiativeKind } from '../../../src/kinds/initiative/index.js';
import { scaffolderTemplateKind } from '../../../src/kinds/scaffolder-template/index.js';
import type { KindHandler } from '../../../src/kinds/types.js';
import { createOf } from '../kind-change.js';
import { yamlDoc } from '../initiative/yaml-doc.js';
import { AT } from '../parse-context.js';

const SOURCE = 'test-repo';
let emulator: RunningEmulator;
let client: ApiClient;

beforeEach(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0, now: () => AT.now });
  client = createApiClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, sleep: async () => {} });
});
afterEach(async () => {
  await client.close();
  await emulator.stop();
});

const parse = <S, L>(kind: KindHandler<S, L>, text: string, file: string): DesiredObject<S> => {
  const result = kind.manifest.parse(yamlDoc(text, file), AT);
  const error = result.diagnostics.find((d) => d.severity === 'error');
  if (error) throw new Error(error.message);
  return result.objects[0]!;
};

/** Creates `desired`, lets `rewrite` change what the server stored, then plans again: the actions. */
const applyRewriteReplan = async <S, L>(
  kind: KindHandler<S, L>,
  desired: DesiredObject<S>,
  rewrite: () => void,
): Promise<string[]> => {
  await kind.write.apply(createOf(desired), { client, options: { sourceId: SOURCE } });
  rewrite();
  const live = await kind.live.fetch({ client, desired: [desired], managedIds: [desired.id], readBefore: [] });
  const plan = buildPlan({
    desired: [desired],
    // Ownership as the engine's inventory would give it.
    live: live.map((l) => ({ ...l, owner: SOURCE })),
    handlers: [kind],
    options: {
      sourceId: SOURCE,
      prune: false,
      allowTakeover: false,
      allowMassDelete: false,
      protect: [],
      manifestsComplete: true,
    },
  });
  return plan.changes.filter((c) => c.id === desired.id).map((c) => c.action);
};

describe('the server keeps a value of its own choosing: the next plan is empty', () => {
  it('entity type: an icon that is not built in, replaced by a default the code never guessed', async () => {
    const desired = parse(
      entityTypeKind,
      'type: stream\nname: Stream\niconTag: kafka\nschema: {type: object}\n',
      '.cortex/entity-types/stream.yaml',
    );
    const actions = await applyRewriteReplan(entityTypeKind, desired, () => {
      const stored = emulator.state.entityTypes.byType.stream!;
      expect(stored.iconTag).not.toBe('kafka');
      stored.iconTag = 'Cortex-builtin::Hexagon';
    });
    expect(actions).toEqual(['noop']);
  });

  it('entity type: a built-in icon is compared, so a change made live is seen', async () => {
    const desired = parse(
      entityTypeKind,
      'type: stream\nname: Stream\niconTag: Cortex-builtin::Robot\nschema: {type: object}\n',
      '.cortex/entity-types/stream.yaml',
    );
    const actions = await applyRewriteReplan(entityTypeKind, desired, () => {
      emulator.state.entityTypes.byType.stream!.iconTag = 'Cortex-builtin::Hexagon';
    });
    expect(actions).toEqual(['update']);
  });

  it('catalog page: an icon that is not built in, and a type the manifest leaves to the server', async () => {
    const desired = parse(
      catalogPageKind,
      'slug: streams\nname: Streams\niconTag: kafka\nisDraft: false\nfilter: {query: "true"}\n',
      '.cortex/catalog-pages/streams.yaml',
    );
    const actions = await applyRewriteReplan(catalogPageKind, desired, () => {
      const page = emulator.state.catalogPages.items.find((p) => p.slug === 'streams')!;
      page.iconTag = 'Cortex-builtin::Catalog';
      page.type = 'DOMAIN';
    });
    expect(actions).toEqual(['noop']);
  });

  it('Scaffolder template: fields the manifest omits hold whatever defaults the server picked', async () => {
    const desired = parse(
      scaffolderTemplateKind,
      'tag: python\nname: Python\ntype: COOKIECUTTER\nrepoLocator: {type: GITHUB, org: acme, repoName: py}\n',
      '.cortex/scaffolders/python.yaml',
    );
    const actions = await applyRewriteReplan(scaffolderTemplateKind, desired, () => {
      const stored = emulator.state.scaffolders.items.find((t) => t.tag === 'python')!;
      Object.assign(stored, { labels: ['default'], requirePullRequest: true, description: 'filled in' });
    });
    expect(actions).toEqual(['noop']);
  });

  it('Initiative: a notification schedule the server adds when the manifest states none', async () => {
    const desired = parse(
      initiativeKind,
      'name: Q3\nscorecardTag: production-readiness\ntargetDate: "2026-12-31"\nisDraft: false\nemphasizedLevels: [{rank: 1}]\n',
      '.cortex/initiatives/q3.yaml',
    );
    const actions = await applyRewriteReplan(initiativeKind, desired, () => {
      const stored = emulator.state.initiatives.items.find((i) => i.name === 'Q3')!;
      stored.notificationSchedule = { isDisabled: false, timeInterval: 2, timeUnit: 'WEEK', replyToEmails: [] };
    });
    expect(actions).toEqual(['noop']);
  });
});
