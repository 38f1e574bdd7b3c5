/** `{include, exclude}` name lists (catalog page and Initiative filters) as a manifest writes them: empty lists left out. */
import type { JsonObject } from '../../core/model.js';

type NameLists = { include?: readonly string[] | null; exclude?: readonly string[] | null } | null | undefined;

export const nameLists = (value: NameLists): JsonObject | undefined => {
  const out: JsonObject = {};
  if (value?.include && value.include.length > 0) out.include = [...value.include];
  if (value?.exclude && value.exclude.length > 0) out.exclude = [...value.exclude];
  return Object.keys(out).length > 0 ? out : undefined;
};
