/**
 * Test support: the emulator on loopback, a real HTTP client to it, and a record of the requests
 * the kinds send (with their bodies), for the entity-type, dependency and catalog-page tests.
 */
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient, ApiRequest } from '../../../src/api/types.js';
import type { Change, DesiredObject, LiveObject } from '../../../src/core/model.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import type { ApplyContext, FetchContext, KindChange, KindHandler } from '../../../src/kinds/types.js';
import { createOf, removalOf, updateOf } from '../kind-change.js';

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  /** Every request sent through `client`, in order. */
  sent: ApiRequest[];
  applyContext(options?: Partial<ApplyContext['options']>): ApplyContext;
  fetchContext<S>(desired: readonly DesiredObject<S>[], managedIds?: readonly string[]): FetchContext<S>;
  /** Creates a service entity through the API (so dependencies have ends). */
  createEntity(tag: string): Promise<void>;
  stop(): Promise<void>;
}

export const startHarness = async (): Promise<Harness> => {
  const emulator = await startEmulator();
  const http = createApiClient({ baseUrl: emulator.url, apiKey: emulator.apiKey });
  const sent: ApiRequest[] = [];
  const client: ApiClient = {
    request: (req) => {
      sent.push(req);
      return http.request(req);
    },
    paginate: (req, listKey) => {
      sent.push(req);
      return http.paginate(req, listKey);
    },
    close: () => http.close(),
    stats: () => http.stats(),
  };
  return {
    emulator,
    client,
    sent,
    applyContext: (options) => ({
      client,
      options: { sourceId: 'test-repo', ...options },
    }),
    fetchContext: (desired, managedIds = []) => ({ client, desired, managedIds, readBefore: [] }),
    async createEntity(tag) {
      await http.request({
        operation: `create entity \`${tag}\``,
        method: 'POST',
        path: '/api/v1/open-api',
        contentType: 'application/openapi;charset=UTF-8',
        body: `openapi: 3.0.1\ninfo:\n  title: ${tag}\n  x-cortex-tag: ${tag}\n  x-cortex-type: service\n`,
      });
    },
    stop: () => emulator.stop(),
  };
};

/** The change the planner would make for `desired` against `live` (create when there is no live object). */
export const changeFor = <S, L>(
  _handler: KindHandler<S, L>,
  desired: DesiredObject<S> | undefined,
  live: LiveObject<L> | undefined,
  action?: Change['action'],
): KindChange<S, L> => {
  const act = action ?? (live ? 'update' : 'create');
  if (act === 'create' && desired) return createOf(desired);
  if ((act === 'update' || act === 'noop') && desired && live) return updateOf(desired, live, {}, act);
  if ((act === 'delete' || act === 'archive') && live) return removalOf(live, act);
  throw new Error(`a ${act} change needs ${act === 'create' ? 'a manifest' : 'a live object'}`);
};
