/**
 * Entity reads beside the catalog's own: the entity's Kubernetes resources, the relevance search
 * and its Scorecard scores.
 */
import { pagedResponse, type RouteDef } from '../contract.js';
import { isObject, isoSeconds, queryFlag, queryList } from '../util.js';
import { type EntitiesSlices, selectEntities, withEntity } from './entities.js';
import { entitySummary, infoOf, type StoredEntity } from './entity-store.js';

/** The descriptor's `x-cortex-k8s` blocks and the resource type each names. */
const K8S_BLOCKS: Record<string, string> = {
  deployment: 'Deployment',
  argorollout: 'ArgoRollout',
  statefulset: 'StatefulSet',
  cronjob: 'CronJob',
};

/**
 * `GET /catalog/{tagOrId}/k8s`: not in the vendor OpenAPI; the vendor CLI's test reads
 * `{resources: [{namespace, name, cluster, type, lastUpdated}]}`. A tenant gets them from its
 * Kubernetes agent; here they are the identifiers (`namespace/name`) the descriptor's
 * `x-cortex-k8s` block lists (inferred).
 */
const k8s: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/:tagOrId/k8s',
  permission: null,
  handle: withEntity((entity) => {
    const block = infoOf(entity.descriptor)['x-cortex-k8s'];
    const resources = Object.entries(K8S_BLOCKS).flatMap(([key, type]) => {
      const list = isObject(block) && Array.isArray(block[key]) ? block[key].filter(isObject) : [];
      return list.map((item) => {
        const [namespace, name] = String(item.identifier ?? '').includes('/')
          ? String(item.identifier).split('/', 2)
          : [null, String(item.identifier ?? '')];
        return {
          namespace,
          name,
          cluster: typeof item.cluster === 'string' ? item.cluster : null,
          type,
          lastUpdated: isoSeconds(entity.lastUpdated),
        };
      });
    });
    return { status: 200, body: { resources } };
  }),
};

/**
 * `GET /catalog/search` ("relevance-ranked catalog search", vendor docs; its parameters are not
 * published): `query` matched against tag and name, ranked exact tag, tag prefix, tag substring,
 * name substring; optional `types` / `groups`; paged `entities` summaries (inferred).
 */
const search: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/search',
  permission: null,
  handle(req, state) {
    const q = (req.query.get('query') ?? '').trim().toLowerCase();
    const groups = queryList(req.query, 'groups');
    const rank = (e: StoredEntity): number => {
      const tag = e.tag.toLowerCase();
      const name = String(infoOf(e.descriptor).title ?? '').toLowerCase();
      if (q === '') return 4;
      if (tag === q) return 0;
      if (tag.startsWith(q)) return 1;
      if (tag.includes(q)) return 2;
      return name.includes(q) ? 3 : -1;
    };
    const items = selectEntities(state, queryList(req.query, 'types'), queryFlag(req.query, 'includeArchived', false))
      .map((e) => ({
        e,
        r: rank(e),
        s: entitySummary(e, state.entities, { owners: false, metadata: false, links: false }),
      }))
      .filter(({ r, s }) => r >= 0 && (groups.length === 0 || groups.some((g) => (s.groups as string[]).includes(g))))
      .sort((a, b) => a.r - b.r)
      .map(({ s }) => s);
    return pagedResponse(items, req.query, 'entities');
  },
};

/** `GET /catalog/{tagOrId}/scorecards`: the emulator evaluates no scorecard, so an entity has no scores (`[]`). */
const scores: RouteDef<EntitiesSlices> = {
  method: 'GET',
  pattern: '/api/v1/catalog/:tagOrId/scorecards',
  permission: null,
  handle: withEntity(() => ({ status: 200, body: [] })),
};

/** Entity lookup routes. */
export const entityLookupRoutes: readonly RouteDef<EntitiesSlices>[] = [k8s, search, scores];
