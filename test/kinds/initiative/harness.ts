/**
 * Test harness: drives one kind handler against the emulator over real HTTP the way the engine
 * does (parse → fetchLive → compare canonical forms → apply), without the rest of the engine.
 */
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { DesiredObject, LiveObject } from '../../../src/core/model.js';
import type { ApplyContext, KindChange, KindHandler } from '../../../src/kinds/types.js';
import { createOf, updateOf } from '../kind-change.js';
import { AT } from '../parse-context.js';
import { yamlDoc } from './yaml-doc.js';

/** A client for `url` that never really sleeps (retry backoffs and 429 pauses are instant). */
export const testClient = (url: string, apiKey: string): ApiClient =>
  createApiClient({ baseUrl: url, apiKey, sleep: async () => {}, random: () => 0, timeoutMs: 5_000 });

/** Parses manifest texts with `kind`; fails the test on any error diagnostic. */
export const desiredOf = <S, L>(kind: KindHandler<S, L>, texts: readonly string[], dir: string): DesiredObject<S>[] =>
  texts.flatMap((text, i) => {
    const result = kind.manifest.parse(yamlDoc(text, `${dir}/m${i}.yaml`), AT);
    const errors = result.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new Error(errors.map((d) => `${d.line}:${d.column} ${d.message}`).join('\n'));
    return result.objects;
  });

/** What the planner would do for each desired object (no prune). */
export const planOf = async <S, L>(
  kind: KindHandler<S, L>,
  client: ApiClient,
  desired: readonly DesiredObject<S>[],
): Promise<KindChange<S, L>[]> => {
  const live = await kind.live.fetch({ client, desired, managedIds: [], readBefore: [] });
  return desired.map((d) => {
    const match: LiveObject<L> | undefined = live.find((l) => l.id === d.id);
    if (match === undefined) return createOf(d);
    const same = JSON.stringify(kind.live.canonical(match, d)) === JSON.stringify(kind.manifest.canonical(d));
    return updateOf(d, match, {}, same ? 'noop' : 'update');
  });
};

export const applyContext = (client: ApiClient): ApplyContext => ({
  client,
  options: { sourceId: 'test-repo' },
});

/** Plans then applies every change; returns the errors of the changes that failed. */
export const planAndApply = async <S, L>(
  kind: KindHandler<S, L>,
  client: ApiClient,
  desired: readonly DesiredObject<S>[],
): Promise<Error[]> => {
  const errors: Error[] = [];
  let changes: KindChange<S, L>[];
  try {
    changes = await planOf(kind, client, desired);
  } catch (error) {
    return [error as Error];
  }
  for (const change of changes) {
    try {
      await kind.write.apply(change, applyContext(client));
    } catch (error) {
      errors.push(error as Error);
    }
  }
  return errors;
};
