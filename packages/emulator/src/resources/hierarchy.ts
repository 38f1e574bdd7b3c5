/**
 * The nested hierarchy of `GET /api/v1/catalog/{tagOrId}` (vendor `EntityHierarchyDetails`): the
 * parent chain and the children chain, each node with its own parents (or children) down to
 * `hierarchyDepth` (`full` or a positive integer), and its `groups` when `includeHierarchyFields`
 * holds `groups`.
 *
 * An edge comes from either end: `x-cortex-parents` (or the legacy `x-cortex-domain-parents`) of
 * the child, or `x-cortex-children` of the parent — the vendor's own test data declares domain
 * hierarchies only with `x-cortex-children`.
 */
import { isObject, type JsonObject } from '../util.js';
import { type EntitiesState, findEntity, infoOf, type StoredEntity } from './entity-store.js';

export interface HierarchyOptions {
  /** Levels to show; `Infinity` for `full`. */
  depth: number;
  groups: boolean;
}

/** Parses `hierarchyDepth` (`full` or a positive integer; default `full`); `undefined` when invalid. */
export const hierarchyDepth = (raw: string | null): number | undefined => {
  if (raw === null || raw === '' || raw.toLowerCase() === 'full') return Number.POSITIVE_INFINITY;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : undefined;
};

const tagsOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter(isObject).flatMap((r) => (typeof r.tag === 'string' ? [r.tag] : [])) : [];

interface Edges {
  parents: Map<string, string[]>;
  children: Map<string, string[]>;
}

/** Every parent → child edge of the active entities, from both ends, deduplicated, in declaration order. */
const edgesOf = (entities: EntitiesState): Edges => {
  const parents = new Map<string, string[]>();
  const children = new Map<string, string[]>();
  const add = (parent: string, child: string): void => {
    const up = parents.get(child) ?? [];
    if (!up.includes(parent)) parents.set(child, [...up, parent]);
    const down = children.get(parent) ?? [];
    if (!down.includes(child)) children.set(parent, [...down, child]);
  };
  for (const entity of Object.values(entities.byId)) {
    if (entity.isArchived) continue;
    const info = infoOf(entity.descriptor);
    for (const parent of [...tagsOf(info['x-cortex-parents']), ...tagsOf(info['x-cortex-domain-parents'])]) {
      add(parent, entity.tag);
    }
    for (const child of tagsOf(info['x-cortex-children'])) add(entity.tag, child);
  }
  return { parents, children };
};

const groupsOf = (entity: StoredEntity): string[] => {
  const info = infoOf(entity.descriptor);
  const groups = info['x-cortex-groups'] ?? info['x-cortex-service-groups'];
  return Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [];
};

/** The nested hierarchy of `entity` (cycles are cut where a tag repeats on its own path). */
export const nestedHierarchy = (
  entity: StoredEntity,
  entities: EntitiesState,
  options: HierarchyOptions,
): { parents: JsonObject[]; children: JsonObject[] } => {
  const edges = edgesOf(entities);
  const walk = (
    direction: 'parents' | 'children',
    tag: string,
    level: number,
    path: ReadonlySet<string>,
  ): JsonObject[] =>
    (edges[direction].get(tag) ?? []).flatMap((next) => {
      const found = findEntity(entities, next);
      // Only entities that exist (and are active) are nodes; a tag repeated on its own path is a cycle.
      if (!found || found.isArchived || path.has(next)) return [];
      const info = infoOf(found.descriptor);
      const deeper = level < options.depth ? walk(direction, next, level + 1, new Set([...path, next])) : [];
      return [
        {
          id: found.id,
          tag: found.tag,
          name: String(info.title ?? found.tag),
          type: found.type,
          description: typeof info.description === 'string' ? info.description : null,
          definition: isObject(info['x-cortex-definition']) ? info['x-cortex-definition'] : null,
          ...(options.groups ? { groups: groupsOf(found) } : {}),
          [direction]: deeper,
        },
      ];
    });
  const start = new Set([entity.tag]);
  return { parents: walk('parents', entity.tag, 1, start), children: walk('children', entity.tag, 1, start) };
};
