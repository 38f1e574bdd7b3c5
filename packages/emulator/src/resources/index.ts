/**
 * Every resource module of the emulator, and the full state type composed from their slices.
 *
 * To add a module: add its slice to `EmulatorState`, its initial value to `INITIAL_STATE`, and
 * its routes to `ROUTES` — either routes over the whole state (they may read other slices, e.g.
 * `RouteDef<{ scorecards: ScorecardsState; entities: EntitiesState }>`), or routes over their own
 * slice only, wrapped with `scoped('key', routes)`. Routes are matched by specificity (literal
 * segments beat `:params`), so the order here does not matter.
 */
import type { RouteDef } from '../contract.js';
import {
  type ApiKeysState,
  apiKeyRoutes,
  type CustomRolesState,
  initialApiKeysState,
  initialCustomRolesState,
} from './api-keys.js';
import { type CatalogPagesState, catalogPageRoutes, initialCatalogPagesState } from './catalog-pages.js';
import { customDataRoutes } from './custom-data.js';
import { type CustomDataState, initialCustomDataState } from './custom-data-store.js';
import {
  type CustomIntegrationsState,
  customIntegrationRoutes,
  initialCustomIntegrationsState,
} from './custom-integrations.js';
import { type CustomMetricsState, customMetricRoutes, initialCustomMetricsState } from './custom-metrics.js';
import { dependencyRoutes } from './dependencies.js';
import { type DeploysState, deployRoutes, initialDeploysState } from './deploys.js';
import { type DependenciesState, initialDependenciesState } from './dependency-store.js';
import { entityRoutes } from './entities.js';
import { entityLookupRoutes } from './entity-lookups.js';
import { type EntitiesState, initialEntitiesState } from './entity-store.js';
import { type EntityTypesState, initialEntityTypesState } from './entity-type-store.js';
import { entityTypeRoutes } from './entity-types.js';
import { type GitopsLogsState, gitopsLogRoutes, initialGitopsLogsState } from './gitops-logs.js';
import { type InitiativesState, initialInitiativesState, initiativeRoutes } from './initiatives.js';
import { initialScaffoldersState, type ScaffoldersState, scaffolderRoutes } from './scaffolders.js';
import { initialScimState, type ScimState, scimRoutes } from './scim.js';
import { initialScorecardsState, type ScorecardsState, scorecardRoutes } from './scorecards.js';

/** The emulator's whole in-memory state: one slice per resource module. Plain JSON data. */
export interface EmulatorState {
  entities: EntitiesState;
  entityTypes: EntityTypesState;
  dependencies: DependenciesState;
  apiKeys: ApiKeysState;
  customRoles: CustomRolesState;
  initiatives: InitiativesState;
  catalogPages: CatalogPagesState;
  scaffolders: ScaffoldersState;
  scorecards: ScorecardsState;
  customData: CustomDataState;
  customIntegrations: CustomIntegrationsState;
  customMetrics: CustomMetricsState;
  deploys: DeploysState;
  gitopsLogs: GitopsLogsState;
  scim: ScimState;
}

/** A fresh value of each slice. */
export const INITIAL_STATE: { [K in keyof EmulatorState]: () => EmulatorState[K] } = {
  entities: initialEntitiesState,
  entityTypes: initialEntityTypesState,
  dependencies: initialDependenciesState,
  apiKeys: initialApiKeysState,
  customRoles: initialCustomRolesState,
  initiatives: initialInitiativesState,
  catalogPages: initialCatalogPagesState,
  scaffolders: initialScaffoldersState,
  scorecards: initialScorecardsState,
  customData: initialCustomDataState,
  customIntegrations: initialCustomIntegrationsState,
  customMetrics: initialCustomMetricsState,
  deploys: initialDeploysState,
  gitopsLogs: initialGitopsLogsState,
  scim: initialScimState,
};

/** Slices kept by `reset()` (so the keys in use keep working). */
export const KEPT_ON_RESET: readonly (keyof EmulatorState)[] = ['apiKeys', 'customRoles'];

/** A fresh state. */
export const initialState = (): EmulatorState => {
  const out: Partial<Record<keyof EmulatorState, unknown>> = {};
  for (const key of Object.keys(INITIAL_STATE) as (keyof EmulatorState)[]) out[key] = INITIAL_STATE[key]();
  return out as EmulatorState;
};

/** Wraps routes written over one slice so they receive that slice of the whole state. */
export const scoped = <K extends keyof EmulatorState>(
  key: K,
  routes: readonly RouteDef<EmulatorState[K]>[],
): RouteDef<EmulatorState>[] =>
  routes.map((r) => ({ ...r, handle: (req, state, env) => r.handle(req, state[key], env) }));

/** Every route of every module. */
export const ROUTES: readonly RouteDef<EmulatorState>[] = [
  ...entityRoutes,
  ...entityLookupRoutes,
  ...entityTypeRoutes,
  ...dependencyRoutes,
  ...apiKeyRoutes,
  ...initiativeRoutes,
  ...catalogPageRoutes,
  ...scaffolderRoutes,
  ...scorecardRoutes,
  ...customDataRoutes,
  ...customIntegrationRoutes,
  ...customMetricRoutes,
  ...deployRoutes,
  ...gitopsLogRoutes,
  ...scimRoutes,
];
