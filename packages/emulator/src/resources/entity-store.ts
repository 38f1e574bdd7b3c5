/**
 * Catalog entities as stored by the emulator: the descriptor kept as parsed data (comments lost,
 * unknown `x-cortex-*` keys dropped, as the vendor does), validation into vendor violations, and
 * the summary / details views the catalog endpoints return.
 */
import { LineCounter, parseDocument } from 'yaml';
import type { EmulatorEnv, MissingDefinitionMode } from '../contract.js';
import { cloneJson, isObject, isoSeconds, type JsonObject, own, putOwn } from '../util.js';
import { CORE_TYPES, type EntityTypesState, findDefinition, validateAgainstSchema } from './entity-type-store.js';

export interface StoredEntity {
  /** `en` + 16 hex; stable across upserts of the same tag. */
  id: string;
  tag: string;
  type: string;
  /** The sanitized descriptor (`{openapi, info: {...}, ...}`). */
  descriptor: JsonObject;
  isArchived: boolean;
  createdAt: number;
  lastUpdated: number;
}

export interface EntitiesState {
  byId: Record<string, StoredEntity>;
  idByTag: Record<string, string>;
}

export const initialEntitiesState = (): EntitiesState => ({ byId: {}, idByTag: {} });

/** A vendor descriptor violation (`{ok:false, violations:[...]}` bodies). */
export interface Violation {
  title: string;
  description: string;
  violationType: 'MUST' | 'SHOULD' | 'MAY' | 'HINT';
  pointer: string;
  paths: string[];
  startLine: number;
  endLine: number;
}

/**
 * The `info` keys the vendor recognizes (incl. the integration blocks the
 * Terraform provider knows). Every other `x-cortex-*` key is silently dropped. `x-cortex-links`,
 * `x-cortex-service-groups` and `x-cortex-domain-parents` are legacy spellings we keep (inferred:
 * the vendor's OpenAPI still names `x-cortex-links`).
 */
export const KNOWN_CORTEX_KEYS: ReadonlySet<string> = new Set([
  'x-cortex-tag',
  'x-cortex-type',
  'x-cortex-groups',
  'x-cortex-service-groups',
  'x-cortex-owners',
  'x-cortex-link',
  'x-cortex-links',
  'x-cortex-custom-metadata',
  'x-cortex-dependency',
  'x-cortex-parents',
  'x-cortex-domain-parents',
  'x-cortex-children',
  'x-cortex-git',
  'x-cortex-relationships',
  'x-cortex-team',
  'x-cortex-definition',
  // The webhook mappings block as the vendor's webhook documentation spells it (the API's name,
  // `x-service-custom-integration-mappings`, is not an `x-cortex-*` key and is kept anyway).
  'x-cortex-custom-integration-mappings',
  ...[
    'alerts',
    'apm',
    'bugsnag',
    'checkmarx',
    'ci-cd',
    'circle-ci',
    'coralogix',
    'dashboards',
    'firehydrant',
    'incident-io',
    'issues',
    'k8s',
    'launch-darkly',
    'microsoft-teams',
    'oncall',
    'rollbar',
    'semgrep',
    'sentry',
    'servicenow',
    'slack',
    'slos',
    'veracode',
    'snyk',
    'static-analysis',
    'wiz',
    'infra',
  ].map((block) => `x-cortex-${block}`),
]);

/** A copy of the descriptor without unknown `x-cortex-*` keys (in `info` and at the top level). */
export const sanitizeDescriptor = (doc: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(doc)) {
    if (key.startsWith('x-cortex-')) continue;
    out[key] = cloneJson(value);
  }
  if (isObject(out.info)) {
    const info: JsonObject = {};
    for (const [key, value] of Object.entries(out.info)) {
      if (key.startsWith('x-cortex-') && !KNOWN_CORTEX_KEYS.has(key)) continue;
      info[key] = value;
    }
    out.info = info;
  }
  return out;
};

/** The info block of a descriptor ({} when missing). */
export const infoOf = (doc: JsonObject): JsonObject => (isObject(doc.info) ? doc.info : {});

/** The entity type a descriptor declares (`service` when absent). */
export const typeOf = (doc: JsonObject): string => {
  const t = infoOf(doc)['x-cortex-type'];
  return typeof t === 'string' && t !== '' ? t : 'service';
};

const lineRange = (text: string | undefined, path: string[]): { startLine: number; endLine: number } => {
  if (text === undefined) return { startLine: 1, endLine: 1 };
  try {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, uniqueKeys: false });
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === 'object' && node.range) {
        return { startLine: lineCounter.linePos(node.range[0]).line, endLine: lineCounter.linePos(node.range[1]).line };
      }
    }
  } catch {
    // fall through
  }
  return { startLine: 1, endLine: 1 };
};

/** A MUST violation at a path of the descriptor, with line numbers when the source text is known. */
export const violation = (title: string, description: string, path: string[], text?: string): Violation => ({
  title,
  description,
  violationType: 'MUST',
  pointer: `/${path.join('/')}`,
  paths: [`/${path.join('/')}`],
  ...lineRange(text, path),
});

/**
 * Checks a complete descriptor the way `POST /open-api` does; [] when valid. A custom-type
 * descriptor without `x-cortex-definition` is judged by `missingDefinition` (see its type).
 */
export const validateDescriptor = (
  doc: unknown,
  types: EntityTypesState,
  text?: string,
  missingDefinition: MissingDefinitionMode = 'empty-schema',
): Violation[] => {
  if (!isObject(doc)) return [violation('Invalid descriptor', 'The descriptor must be a YAML/JSON object', [], text)];
  const info = doc.info;
  if (!isObject(info)) return [violation('Missing info', 'Descriptor is missing the info block', ['info'], text)];
  const out: Violation[] = [];
  if (typeof info.title !== 'string' || info.title.trim() === '') {
    out.push(violation('Missing title', 'info.title is required', ['info', 'title'], text));
  }
  const tag = info['x-cortex-tag'];
  if (typeof tag !== 'string' || tag.trim() === '') {
    out.push(violation('Missing x-cortex-tag', 'info.x-cortex-tag is required', ['info', 'x-cortex-tag'], text));
  }
  const rawType = info['x-cortex-type'];
  if (rawType !== undefined && (typeof rawType !== 'string' || rawType === '')) {
    out.push(violation('Invalid x-cortex-type', 'x-cortex-type must be a string', ['info', 'x-cortex-type'], text));
  } else {
    const type = typeOf(doc);
    if (!CORE_TYPES.includes(type)) {
      const def = findDefinition(types, type);
      const at = ['info', 'x-cortex-definition'];
      if (!def) {
        out.push(
          violation('Unknown entity type', `Entity type '${type}' does not exist`, ['info', 'x-cortex-type'], text),
        );
      } else if (info['x-cortex-definition'] === undefined && missingDefinition !== 'refuse') {
        const accepted =
          missingDefinition === 'allow'
            ? validateAgainstSchema(def.schema, {}).length === 0
            : isObject(def.schema) && Object.keys(def.schema).length === 0;
        if (!accepted) out.push(violation('Standard cortex tags', 'Definition is required', at, text));
      } else if (!isObject(info['x-cortex-definition'])) {
        out.push(violation('Standard cortex tags', 'Definition is required', at, text));
      } else {
        for (const p of validateAgainstSchema(def.schema, info['x-cortex-definition'])) {
          out.push(
            violation('Invalid definition', `x-cortex-definition does not match the '${type}' schema: ${p}`, at, text),
          );
        }
      }
    }
  }
  const groups = info['x-cortex-groups'];
  if (groups !== undefined && (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string'))) {
    out.push(
      violation('Invalid groups', 'x-cortex-groups must be a list of strings', ['info', 'x-cortex-groups'], text),
    );
  }
  const deps = info['x-cortex-dependency'];
  if (deps !== undefined) {
    if (!Array.isArray(deps)) {
      out.push(
        violation('Invalid dependency', 'x-cortex-dependency must be a list', ['info', 'x-cortex-dependency'], text),
      );
    } else {
      deps.forEach((d, i) => {
        const at = ['info', 'x-cortex-dependency', String(i)];
        if (!isObject(d) || typeof d.tag !== 'string') {
          out.push(violation('Invalid dependency', 'Each dependency needs a tag', at, text));
        } else if ((d.method === undefined) !== (d.path === undefined)) {
          out.push(violation('Invalid dependency', 'method and path must be given together', at, text));
        }
      });
    }
  }
  return out;
};

/** The entity with that tag or id, if any. */
export const findEntity = (state: EntitiesState, tagOrId: string): StoredEntity | undefined => {
  const byTag = own(state.idByTag, tagOrId);
  return (byTag !== undefined ? own(state.byId, byTag) : undefined) ?? own(state.byId, tagOrId);
};

/** Stores a sanitized, validated descriptor: a new entity or a full replace of the existing one. */
export const putEntity = (
  state: EntitiesState,
  descriptor: JsonObject,
  env: EmulatorEnv,
): { entity: StoredEntity; created: boolean } => {
  const clean = sanitizeDescriptor(descriptor);
  const tag = String(infoOf(clean)['x-cortex-tag']);
  const now = env.now();
  const existing = findEntity(state, tag);
  if (existing && existing.tag === tag) {
    existing.descriptor = clean;
    existing.type = typeOf(clean);
    existing.lastUpdated = now;
    return { entity: existing, created: false };
  }
  let id = env.newId('en');
  while (state.byId[id]) id = env.newId('en');
  const entity: StoredEntity = {
    id,
    tag,
    type: typeOf(clean),
    descriptor: clean,
    isArchived: false,
    createdAt: now,
    lastUpdated: now,
  };
  state.byId[id] = entity;
  putOwn(state.idByTag, tag, id);
  return { entity, created: true };
};

/** Removes an entity (its API dependencies are the caller's business). */
export const removeEntity = (state: EntitiesState, entity: StoredEntity): void => {
  delete state.byId[entity.id];
  delete state.idByTag[entity.tag];
};

const objects = (value: unknown): JsonObject[] => (Array.isArray(value) ? value.filter(isObject) : []);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const linksOf = (info: JsonObject) =>
  [...objects(info['x-cortex-link']), ...objects(info['x-cortex-links'])].map((l) => ({
    name: str(l.name) ?? '',
    type: str(l.type) ?? '',
    url: str(l.url) ?? '',
    description: str(l.description),
  }));

const metadataOf = (info: JsonObject) =>
  Object.entries(isObject(info['x-cortex-custom-metadata']) ? info['x-cortex-custom-metadata'] : {}).map(
    ([key, value]) => ({ key, value: isObject(value) && 'value' in value ? value.value : value, source: 'YAML' }),
  );

const gitOf = (info: JsonObject) => {
  const git = isObject(info['x-cortex-git']) ? info['x-cortex-git'] : undefined;
  const gh = git && isObject(git.github) ? git.github : undefined;
  if (!gh || typeof gh.repository !== 'string') return null;
  return {
    provider: 'github',
    repository: gh.repository,
    repositoryUrl: `https://github.com/${gh.repository}`,
    basepath: str(gh.basepath),
    alias: str(gh.alias),
  };
};

const slackOf = (info: JsonObject) =>
  objects(info['x-cortex-owners'])
    .filter((o) => String(o.type).toLowerCase() === 'slack')
    .map((o) => ({ name: str(o.channel) ?? '', notificationsEnabled: o.notificationsEnabled === true }));

const ownersOf = (info: JsonObject, entities: EntitiesState) => {
  const owners = objects(info['x-cortex-owners']);
  const teams = owners
    .filter((o) => String(o.type).toLowerCase() === 'group')
    .map((o) => {
      const name = str(o.name) ?? '';
      const team = findEntity(entities, name);
      return {
        tag: name,
        name: team ? String(infoOf(team.descriptor).title) : name,
        id: team?.id ?? null,
        isArchived: team?.isArchived ?? false,
        provider: str(o.provider) ?? 'CORTEX',
        description: str(o.description),
        inheritance: str(o.inheritance),
      };
    });
  const individuals = owners
    .filter((o) => String(o.type).toLowerCase() === 'email')
    .map((o) => ({ email: str(o.email) ?? '', description: str(o.description) }));
  return { teams, individuals };
};

const hierarchyOf = (info: JsonObject, entities: EntitiesState) => {
  const node = (ref: JsonObject) => {
    const tag = str(ref.tag) ?? '';
    const e = findEntity(entities, tag);
    return { tag, name: e ? String(infoOf(e.descriptor).title) : null, type: e?.type ?? null };
  };
  return {
    parents: [...objects(info['x-cortex-parents']), ...objects(info['x-cortex-domain-parents'])].map(node),
    children: objects(info['x-cortex-children']).map(node),
  };
};

/** What the list endpoint may add on request (`includeOwners`, `includeMetadata`, `includeLinks`). */
export interface SummaryOptions {
  owners: boolean;
  metadata: boolean;
  links: boolean;
}

/** An `EntityDetailsSummary` (`GET /api/v1/catalog`). */
export const entitySummary = (entity: StoredEntity, entities: EntitiesState, opts: SummaryOptions): JsonObject => {
  const info = infoOf(entity.descriptor);
  const groups = info['x-cortex-groups'] ?? info['x-cortex-service-groups'];
  return {
    id: entity.id,
    tag: entity.tag,
    name: String(info.title ?? entity.tag),
    type: entity.type,
    description: str(info.description),
    isArchived: entity.isArchived,
    lastUpdated: isoSeconds(entity.lastUpdated),
    groups: Array.isArray(groups) ? groups : [],
    // Present and empty when not asked for, as the vendor's CLI tests against a live tenant show.
    links: opts.links ? linksOf(info) : [],
    metadata: opts.metadata ? metadataOf(info) : [],
    ...(opts.owners ? { owners: ownersOf(info, entities) } : {}),
    git: gitOf(info),
    hierarchy: hierarchyOf(info, entities),
    slackChannels: slackOf(info),
  };
};

/** A `DetailsResponse` (`GET /api/v1/catalog/{tagOrId}`, archive, unarchive). */
export const entityDetails = (entity: StoredEntity, entities: EntitiesState): JsonObject => {
  const info = infoOf(entity.descriptor);
  const owners = ownersOf(info, entities);
  const summary = entitySummary(entity, entities, { owners: false, metadata: true, links: true });
  return {
    ...summary,
    definition: isObject(info['x-cortex-definition']) ? info['x-cortex-definition'] : null,
    ownership: {
      emails: owners.individuals,
      groups: owners.teams.map((t) => ({
        groupName: t.tag,
        provider: t.provider,
        description: t.description,
        inheritance: t.inheritance,
      })),
      slackChannels: slackOf(info),
    },
    ownersV2: owners,
  };
};
