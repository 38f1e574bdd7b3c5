/**
 * The pure half of the `entity` kind: Cortex entity descriptors (`cortex.yaml`), identified by
 * `info.x-cortex-tag`. See `readme.md` in this folder for what is compared.
 */
import { sortKeys } from '../../core/diff.js';
import { mappingsOfInfo } from '../../core/webhook-routing.js';
import type { KindModel, ParseResult, PruneAction } from '../../core/kind-contract.js';
import type { DesiredObject, Diagnostic, JsonValue, LiveObject, ParsedDocument } from '../../core/model.js';
import { ENTITY_FOLDERS, ownsEntityFile } from './files.js';
import { checkIntegrationMappings } from './mappings.js';
import type { EntityLive } from './live-state.js';
import { canonicalDescriptor, DEFAULT_ENTITY_TYPE, entityTypeOfDescriptor } from './normalize.js';
import { CUSTOM_METADATA_KEY, OWNERSHIP_METADATA_KEY, setsReservedOwnershipKey } from './ownership.js';
import { entityReferences, parseEntityDocument } from './parse.js';
import { reservedEntity } from './records/names.js';
import { type EntityDescriptor, entityDescriptorSchema } from './schema.js';
import { toManifestFiles } from './to-manifest.js';
import { CLAIM_KEY_PREFIX } from './merge.js';
import { mergeEntityModel } from './merge-model.js';

/** The first custom metadata key of cortex-sync's a manifest sets: the ownership marker, or a source's claim (ADR 0004). */
const reservedKeySet = (raw: unknown): string | undefined => {
  if (setsReservedOwnershipKey(raw)) return OWNERSHIP_METADATA_KEY;
  const info = typeof raw === 'object' && raw !== null ? (raw as { info?: unknown }).info : undefined;
  const metadata =
    typeof info === 'object' && info !== null ? (info as Record<string, unknown>)[CUSTOM_METADATA_KEY] : undefined;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return undefined;
  return Object.keys(metadata).find((key) => key.startsWith(CLAIM_KEY_PREFIX));
};

/**
 * Parses one document; a manifest that sets the ownership marker or a source's claim itself is an
 * error (the keys are reserved).
 */
const parseEntity = (doc: ParsedDocument): ParseResult<EntityDescriptor> => {
  const result = parseEntityDocument(doc);
  const key = reservedKeySet(doc.value);
  if (key === undefined) return result;
  const path = ['info', CUSTOM_METADATA_KEY, key];
  const field = `info.${CUSTOM_METADATA_KEY}.${key}`;
  if (result.diagnostics.some((d) => d.severity === 'error' && d.field === field)) return result;
  const at = doc.locate(path);
  const id = result.objects[0]?.id;
  const reserved: Diagnostic = {
    severity: 'error',
    code: 'reserved-key',
    message: `${field}: reserved for cortex-sync's ${key === OWNERSHIP_METADATA_KEY ? 'ownership marker' : 'claims of sources that write keys into an entity they do not own'}; remove it from the manifest`,
    file: doc.file,
    line: at.line,
    column: at.column,
    field,
    kind: 'entity',
    ...(id !== undefined ? { id } : {}),
  };
  return { objects: [], diagnostics: [...result.diagnostics, reserved] };
};

/** Canonical form of a live entity; an archived one read without its descriptor compares by its summary. */
const liveEntityState = (obj: LiveObject<EntityLive>): JsonValue => {
  if (obj.state.descriptor) return canonicalDescriptor(obj.state.descriptor);
  const summary = obj.state.summary;
  const info: Record<string, JsonValue> = { 'x-cortex-tag': obj.id };
  if (summary?.name !== undefined) info.title = summary.name;
  if (summary?.description !== undefined) info.description = summary.description;
  info['x-cortex-type'] = summary?.type ?? DEFAULT_ENTITY_TYPE;
  return sortKeys({ info });
};

/**
 * The canonical form of each desired descriptor, kept as long as its parsed manifest is. The
 * watcher's parse cache, and the re-plan under the lease, hand the plan the same objects again, and
 * building the forms of 10,000 unchanged descriptors anew was a fifth of everything a one-file
 * change allocated. Keyed by the spec (never changed once parsed): an edited file's new spec gets
 * a new form, and the old form goes with the old spec. A cache of a pure function, nothing more.
 */
const desiredForms = new WeakMap<EntityDescriptor, JsonValue>();
const desiredEntityState = (obj: DesiredObject<EntityDescriptor>): JsonValue => {
  const known = desiredForms.get(obj.spec);
  if (known !== undefined) return known;
  const form = canonicalDescriptor(obj.spec);
  desiredForms.set(obj.spec, form);
  return form;
};

const isLive = (obj: DesiredObject<EntityDescriptor> | LiveObject<EntityLive>): obj is LiveObject<EntityLive> =>
  !('spec' in obj);

/**
 * The keys of a descriptor its manifest sets: each key of `info` as `info.<key>`, and each other
 * top-level key but the OpenAPI version (`paths`); sorted. The ownership marker is cortex-sync's.
 */
const keysOfSpec = new WeakMap<EntityDescriptor, string[]>();
const descriptorKeys = (obj: DesiredObject<EntityDescriptor>): string[] => {
  const known = keysOfSpec.get(obj.spec);
  if (known !== undefined) return known;
  const top = Object.keys(obj.spec).filter((k) => k !== 'info' && k !== 'openapi');
  const info = Object.keys(obj.spec.info).map((k) => `info.${k}`);
  const keys = [...top, ...info].sort();
  // Kept per descriptor (a watcher's unchanged manifests are the same objects run after run) only
  // when the descriptor cannot change under it; frozen, so no caller can change it either.
  if (Object.isFrozen(obj.spec) && Object.isFrozen(obj.spec.info))
    keysOfSpec.set(obj.spec, Object.freeze(keys) as string[]);
  return keys;
};

/** The entity type of an entity, desired or live. */
const typeOfEntity = (obj: DesiredObject<EntityDescriptor> | LiveObject<EntityLive>): string => {
  if (!isLive(obj)) return entityTypeOfDescriptor(obj.spec).trim();
  if (obj.state.descriptor) return entityTypeOfDescriptor(obj.state.descriptor).trim();
  return obj.state.summary?.type ?? DEFAULT_ENTITY_TYPE;
};

/** How entities are written: the whole descriptor, or only the keys the manifest declares (ADR 0004). */
export type EntityWrites = 'replace' | 'merge';

/** Settings of the `entity` kind. */
export interface EntitySettings {
  /** What prune does to an entity whose manifest is gone (default `archive`). */
  pruneAction: PruneAction;
  /** `replace` (default): POST the whole descriptor; `merge`: PATCH the declared keys. */
  entityWrites?: EntityWrites;
}

type EntityModel = KindModel<EntityDescriptor, EntityLive> &
  Required<Pick<KindModel<EntityDescriptor, EntityLive>, 'export'>> & { entityTypeOf: typeof typeOfEntity };

/** The pure half of the `entity` kind; `entityTypeOf` is its `manifest.typedBy.typeOf`. */
export const createEntityModel = (settings: EntitySettings): EntityModel => {
  const whole = wholeEntityModel(settings);
  if (settings.entityWrites !== 'merge') return whole;
  const merge = mergeEntityModel(whole);
  return {
    ...whole,
    manifest: { ...whole.manifest, ...merge.manifest },
    live: { ...whole.live, ...merge.live },
    write: { ...whole.write, ...merge.write },
  };
};

const wholeEntityModel = (settings: EntitySettings): EntityModel => ({
  kind: 'entity',
  title: 'entity',
  refersTo: ['entity-type', 'entity'],
  layout: {
    identity: '`info.x-cortex-tag`',
    folders: ENTITY_FOLDERS,
    elsewhere: 'every cortex.yaml or cortex.yml',
    ownsFile: ownsEntityFile,
  },
  manifest: {
    schema: entityDescriptorSchema,
    parse: parseEntity,
    references: entityReferences,
    canonical: desiredEntityState,
    checkDesiredSet: checkIntegrationMappings,
    typedBy: { kind: 'entity-type', typeOf: typeOfEntity },
    reservedFor: (obj) => reservedEntity(obj.id, typeOfEntity(obj)),
    webhookTarget: (obj) => ({ tag: obj.id, mappings: mappingsOfInfo(obj.spec.info) }),
    managedKeys: descriptorKeys,
  },
  entityTypeOf: typeOfEntity,
  live: { canonical: liveEntityState, ownershipOnObject: true },
  prune: { action: settings.pruneAction },
  export: { toManifestFiles },
});
