/**
 * The API clients every source of a watcher shares: one per API address, at the process's rate
 * and concurrency (its flags, else its environment, else the defaults), behind one fair budget
 * (`fair-budget.ts`). A repository's `cortex-sync.yaml` may set `requestsPerMinute` and
 * `concurrency` for a run of its own, but a source's file must not give it a client of its own
 * beside the shared one: that client's requests would count against the workspace's rate without
 * the budget knowing of them (429s for every source), or raise the process's rate above the
 * operator's.
 */
import type { ApiClient } from '../api/types.js';
import type { Diagnostic } from '../core/model.js';
import { apiClientFor } from '../engine/api-client.js';
import type { SyncConfig } from '../engine/config.js';
import { systemClock } from '../engine/context.js';
import { SETTINGS } from '../engine/settings.js';
import { decideSetting } from '../engine/settings-resolve.js';
import { settingsSaid } from '../runtime-io/setting-options.js';
import { FairBudget } from './fair-budget.js';

/** A setting that is the whole process's: its flag, else its environment variable, else the default. */
const processWide = (flags: object, env: NodeJS.ProcessEnv, key: 'requestsPerMinute' | 'concurrency'): number => {
  const spec = SETTINGS.find((s) => s.key === key);
  if (!spec) throw new Error(`no setting ${key}`);
  // A bad value is reported by every source's run (its configuration is invalid); the default stands here.
  const problems: Diagnostic[] = [];
  const decided = decideSetting(spec, { flags: settingsSaid(flags, SETTINGS), env, file: {}, lines: {} }, problems);
  const value = problems.length === 0 ? decided.value : spec.default;
  return typeof value === 'number' ? value : Number(spec.default);
};

export const sharedClients = (
  flags: object,
  env: NodeJS.ProcessEnv,
  at: { apiKey: string; userAgent: string; mayWrite: () => boolean },
) => {
  const requestsPerMinute = processWide(flags, env, 'requestsPerMinute');
  const concurrency = processWide(flags, env, 'concurrency');
  const budget = new FairBudget(concurrency, { mayWrite: at.mayWrite });
  const clients = new Map<string, ApiClient>();
  return {
    budget,
    /** The client a source's run gets (`WatcherOptions.createClient`): its view of the shared one. */
    clientFor:
      (name: string) =>
      (config: SyncConfig, _key: string, events: Parameters<FairBudget['clientFor']>[2]): ApiClient => {
        let shared = clients.get(config.baseUrl);
        if (!shared) {
          shared = apiClientFor({ ...config, requestsPerMinute, concurrency }, at.apiKey, {
            clock: systemClock,
            events: budget.events,
            userAgent: at.userAgent,
          });
          clients.set(config.baseUrl, shared);
        }
        return budget.clientFor(name, shared, events);
      },
    close: async () => {
      for (const c of clients.values()) await c.close();
    },
  };
};

export type SharedClients = ReturnType<typeof sharedClients>;
