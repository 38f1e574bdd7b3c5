/**
 * Test support: the emulator on loopback, a real HTTP client to it, and a record of the requests
 * the kinds send (with their bodies), for the entity-type, dependency and catalog-page tests.
 */
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient, ApiRequest } from '../../../src/api/types.js';
import type { Change, DesiredObject, LiveObject } from '../../../src/core/model.js';
import { type RunningEmulator, startEmulator } from '../../../src/emulator/server.js';
import type { AnyKindHandler, ApplyContext, FetchContext } from '../../../src/kinds/types.js';

export interface Harness {
  emulator: RunningEmulator;
  client: ApiClient;
  /** Every request sent through `client`, in order. */
  sent: ApiRequest[];
  applyContext(options?: Partial<ApplyContext['options']>): ApplyContext;
  fetchContext(desired: readonly DesiredObject[], managedIds?: readonly string[]): FetchContext;
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
      options: { sourceId: 'test-repo', forceEntityTypeSchema: false, ...options },
    }),
    fetchContext: (desired, managedIds = []) => ({ client, entityTypes: [], desired, managedIds }),
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
export const changeFor = (
  handler: AnyKindHandler,
  desired: DesiredObject | undefined,
  live: LiveObject | undefined,
  action?: Change['action'],
): Change => ({
  kind: handler.kind,
  id: desired?.id ?? live?.id ?? '',
  action: action ?? (live ? 'update' : 'create'),
  diff: [],
  waitsFor: [],
  ...(desired ? { desired } : {}),
  ...(live ? { live } : {}),
});
