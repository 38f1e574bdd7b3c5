/**
 * `x-service-custom-integration-mappings` across the repository: a value two entities register
 * routes an inbound webhook payload to neither (an error naming both files); a value that is
 * another entity's tag never routes here, because the tag is matched first (a warning).
 */
import type { DesiredObject, Diagnostic } from '../../core/model.js';
import { lookupValue, MAPPING_KEYS, mappingCollisions, mappingsOfInfo } from '../../core/webhook-routing.js';
import { formatFieldPath } from '../../source/zod-diagnostics.js';
import type { EntityDescriptor } from './schema.js';

type Entity = DesiredObject<EntityDescriptor>;

/** Where an entity lists `value`: the first item of either mapping key that holds it. */
const pathOf = (entity: Entity, value: string): (string | number)[] => {
  const info = entity.spec.info as Record<string, unknown>;
  for (const key of MAPPING_KEYS) {
    const list = info[key];
    if (!Array.isArray(list)) continue;
    const index = list.findIndex((item) => lookupValue(item) === value);
    if (index >= 0) return ['info', key, index];
  }
  return ['info', MAPPING_KEYS[0]];
};

const at = (entity: Entity, value: string) => {
  const path = pathOf(entity, value);
  const pos = entity.doc.locate(path);
  return { file: entity.source.file, line: pos.line, column: pos.column, field: formatFieldPath(path) };
};

const where = (e: Entity): string => `entity \`${e.id}\` (${e.source.file}:${e.source.line})`;

/** The collisions among the declared entities' webhook mappings, located in their manifests. */
export const checkIntegrationMappings = (desired: readonly DesiredObject[]): Diagnostic[] => {
  const entities = desired.filter((o): o is Entity => o.kind === 'entity');
  const byTag = new Map(entities.map((e) => [e.id, e]));
  const routable = entities.map((e) => ({ tag: e.id, mappings: mappingsOfInfo(e.spec.info) }));
  const diagnostics: Diagnostic[] = [];
  for (const c of mappingCollisions(routable)) {
    if (c.type === 'registered-twice') {
      const holders = c.holders
        .map((tag) => byTag.get(tag))
        .filter((e): e is Entity => e !== undefined)
        .sort((a, b) =>
          a.source.file < b.source.file ? -1 : a.source.file > b.source.file ? 1 : a.id < b.id ? -1 : 1,
        );
      const last = holders[holders.length - 1];
      if (!last) continue;
      const names = holders.map((e) => `entity \`${e.id}\` (${e.source.file}:${at(e, c.value).line})`);
      diagnostics.push({
        severity: 'error',
        code: 'duplicate-integration-mapping',
        kind: 'entity',
        id: last.id,
        ...at(last, c.value),
        message: `\`${c.value}\` is registered as a webhook mapping by ${names.join(' and ')}: a payload that maps to it would go to neither; keep it on one entity`,
      });
    } else {
      const holder = byTag.get(c.holder);
      const owner = byTag.get(c.tagOf);
      if (!holder || !owner) continue;
      diagnostics.push({
        severity: 'warning',
        code: 'mapping-is-a-tag',
        kind: 'entity',
        id: holder.id,
        ...at(holder, c.value),
        message: `\`${c.value}\` is the tag of ${where(owner)}: webhook payloads with it go to that entity (tags are matched first), never to this one`,
      });
    }
  }
  return diagnostics;
};
