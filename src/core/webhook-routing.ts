/**
 * Which entity an inbound custom-webhook payload goes to, and which alternative mappings collide.
 * Pure: the emulator's webhook, `cortex-sync webhook-route` and `validate` share these rules.
 *
 * The API's rules: the integration's Entity tag JQ is evaluated on the payload; its output is
 * matched against entity tags first, then against the values entities register in their
 * `x-service-custom-integration-mappings` descriptor block; otherwise the payload is refused (400).
 * What the vendor leaves open, and is decided here: the program must give exactly one value, a
 * string or a number (a number is matched by its JSON text); matching is exact (case-sensitive);
 * a value that two entities register routes nowhere.
 */

/** The descriptor key that lists an entity's alternative mapping values (the vendor's name). */
export const MAPPINGS_KEY = 'x-service-custom-integration-mappings';
/** The same block as the vendor's webhook documentation spells it; read as well. */
export const MAPPINGS_KEY_DOCS = 'x-cortex-custom-integration-mappings';
export const MAPPING_KEYS = [MAPPINGS_KEY, MAPPINGS_KEY_DOCS] as const;

/** One entity as routing sees it. */
export interface RoutableEntity {
  tag: string;
  /** Its alternative mapping values. */
  mappings: readonly string[];
}

type WebhookRoute =
  | { ok: true; tag: string; via: 'tag' | 'mapping'; value: string }
  | {
      ok: false;
      reason: 'no-value' | 'several-values' | 'not-a-tag-value' | 'no-entity' | 'ambiguous-mapping';
      message: string;
      /** The value looked up, when there was one. */
      value?: string;
      /** For `ambiguous-mapping`: the entities registering the value. */
      holders?: string[];
    };

/** The mapping values an entity's `info` block registers (strings and numbers; anything else ignored). */
export const mappingsOfInfo = (info: unknown): string[] => {
  if (typeof info !== 'object' || info === null || Array.isArray(info)) return [];
  const record = info as Record<string, unknown>;
  const out: string[] = [];
  for (const key of MAPPING_KEYS) {
    const list = record[key];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const value = lookupValue(item);
      if (value !== undefined && !out.includes(value)) out.push(value);
    }
  }
  return out;
};

/** The text a jq output is looked up by: a string as is, a finite number as its JSON text. */
export const lookupValue = (output: unknown): string | undefined => {
  if (typeof output === 'string') return output;
  if (typeof output === 'number' && Number.isFinite(output)) return JSON.stringify(output);
  return undefined;
};

const describe = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

/** Routes the outputs of the Entity tag JQ to an entity, or says why none receives the payload. */
export const routeWebhookPayload = (outputs: readonly unknown[], entities: readonly RoutableEntity[]): WebhookRoute => {
  const values = outputs.filter((o) => o !== null);
  if (values.length === 0) {
    return {
      ok: false,
      reason: 'no-value',
      message:
        outputs.length === 0
          ? 'the Entity tag JQ gave no value for this payload'
          : 'the Entity tag JQ gave null for this payload',
    };
  }
  if (values.length > 1) {
    return {
      ok: false,
      reason: 'several-values',
      message: `the Entity tag JQ gave ${values.length} values (${values.slice(0, 3).map(describe).join(', ')}${values.length > 3 ? ', ...' : ''}); it must give one`,
    };
  }
  const value = lookupValue(values[0]);
  if (value === undefined) {
    return {
      ok: false,
      reason: 'not-a-tag-value',
      message: `the Entity tag JQ gave ${describe(values[0])}; a tag is a string`,
    };
  }
  const byTag = entities.find((e) => e.tag === value);
  if (byTag) return { ok: true, tag: byTag.tag, via: 'tag', value };
  const holders = entities.filter((e) => e.mappings.includes(value)).map((e) => e.tag);
  if (holders.length === 1) return { ok: true, tag: holders[0]!, via: 'mapping', value };
  if (holders.length > 1) {
    return {
      ok: false,
      reason: 'ambiguous-mapping',
      message: `\`${value}\` is registered in ${MAPPINGS_KEY} by ${holders.length} entities (${holders.join(', ')}); it routes to none of them`,
      value,
      holders: [...holders].sort(),
    };
  }
  return {
    ok: false,
    reason: 'no-entity',
    message: `no entity has the tag \`${value}\`, and none registers it in ${MAPPINGS_KEY}`,
    value,
  };
};

/** A collision among the mapping values of a set of entities. */
type MappingCollision =
  /** Several entities register the same value: a payload with it routes nowhere. */
  | { type: 'registered-twice'; value: string; holders: string[] }
  /** An entity registers another entity's tag: the tag wins, the mapping is never used. */
  | { type: 'shadowed-by-tag'; value: string; holder: string; tagOf: string };

/** Every collision among the mapping values of `entities` (each entity listed once, by tag). */
export const mappingCollisions = (entities: readonly RoutableEntity[]): MappingCollision[] => {
  const tags = new Set(entities.map((e) => e.tag));
  const holdersOf = new Map<string, string[]>();
  const out: MappingCollision[] = [];
  for (const e of entities) {
    for (const value of new Set(e.mappings)) {
      if (tags.has(value) && value !== e.tag) out.push({ type: 'shadowed-by-tag', value, holder: e.tag, tagOf: value });
      const list = holdersOf.get(value) ?? [];
      if (!list.includes(e.tag)) list.push(e.tag);
      holdersOf.set(value, list);
    }
  }
  for (const [value, holders] of holdersOf) {
    if (holders.length > 1) out.push({ type: 'registered-twice', value, holders });
  }
  return out;
};
