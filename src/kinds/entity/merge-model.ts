/**
 * The `entity` kind's pure half in merge mode (`entityWrites: merge`, docs/adr-0004-co-ownership.md):
 * the keys a manifest declares are its managed keys, and only they (and the keys this source
 * declared before and no longer does) are compared. A manifest may leave out `info.title` (it
 * declares only what it manages); creating an entity still needs one.
 */
import type { KindModel, ParseResult } from '../../core/kind-contract.js';
import type { DesiredObject, Diagnostic, JsonValue, LiveObject, ParsedDocument } from '../../core/model.js';
import { wireDescriptor } from './apply.js';
import type { EntityLive } from './live-state.js';
import {
  claimantsOf,
  claimPathOf,
  declaredKeyPaths,
  droppedPaths,
  pathsOverlap,
  projectDescriptor,
  TAG_PATH,
} from './merge.js';
import { canonicalDescriptor } from './normalize.js';
import type { EntityDescriptor } from './schema.js';

type EntityModel = KindModel<EntityDescriptor, EntityLive>;

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Does the manifest's document write a title? (Merge manifests may leave it out.) */
const writesTitle = (raw: unknown): boolean => isMap(raw) && isMap(raw.info) && raw.info.title != null;

/**
 * Parses a merge manifest: one without `info.title` is validated as if it had one (the schema's
 * other rules hold), and the object keeps its own document, so the title is not declared.
 */
const parseMerge =
  (parse: EntityModel['manifest']['parse']): EntityModel['manifest']['parse'] =>
  (doc, ctx): ParseResult<EntityDescriptor> => {
    const raw = doc.value;
    if (writesTitle(raw) || !isMap(raw) || !isMap(raw.info)) return parse(doc, ctx);
    const tag = raw.info['x-cortex-tag'];
    const titled: ParsedDocument = {
      ...doc,
      value: { ...raw, info: { ...raw.info, title: typeof tag === 'string' && tag !== '' ? tag : 'untitled' } },
    };
    const result = parse(titled, ctx);
    return { ...result, objects: result.objects.map((o) => ({ ...o, doc })) };
  };

/** The pure half's members that differ in merge mode, by group; `whole` is the kind in replace mode. */
export const mergeEntityModel = (
  whole: Pick<EntityModel, 'manifest' | 'live'>,
): {
  manifest: Pick<EntityModel['manifest'], 'parse' | 'managedKeys' | 'canonical'>;
  live: Pick<EntityModel['live'], 'canonical' | 'checkAgainstLive'>;
  write: Required<Pick<NonNullable<EntityModel['write']>, 'sharedWrites'>>;
} => {
  // Per spec (the watcher's unchanged manifests are the same objects run after run), per model.
  const keysOf = new WeakMap<EntityDescriptor, string[]>();
  const formsOf = new WeakMap<EntityDescriptor, JsonValue>();
  const declared = (obj: DesiredObject<EntityDescriptor>): string[] => {
    let keys = keysOf.get(obj.spec);
    if (keys === undefined) {
      keys = declaredKeyPaths(obj.doc.value, wireDescriptor(obj.spec, undefined));
      keysOf.set(obj.spec, keys);
    }
    return keys;
  };
  const desiredState = (obj: DesiredObject<EntityDescriptor>): JsonValue => {
    let form = formsOf.get(obj.spec);
    if (form === undefined) {
      form = canonicalDescriptor(projectDescriptor(wireDescriptor(obj.spec, undefined), obj.id, declared(obj)));
      formsOf.set(obj.spec, form);
    }
    return form;
  };
  const liveState = (
    obj: LiveObject<EntityLive>,
    desired?: DesiredObject<EntityDescriptor>,
    dropped: readonly string[] = [],
  ): JsonValue => {
    const descriptor = obj.state.descriptor;
    if (desired === undefined || descriptor == null) return whole.live.canonical(obj, desired);
    return canonicalDescriptor(projectDescriptor(descriptor, obj.id, [...declared(desired), ...dropped]));
  };
  const checkAgainstLive = (
    obj: DesiredObject<EntityDescriptor>,
    live: LiveObject<EntityLive> | undefined,
  ): Diagnostic[] => {
    if (live !== undefined || writesTitle(obj.doc.value)) return [];
    return [
      {
        severity: 'error',
        code: 'merge-create-needs-title',
        message: `entity \`${obj.id}\` does not exist, and creating it needs a whole descriptor: this manifest (entityWrites: merge) has no info.title; add one, or create the entity elsewhere first`,
        file: obj.source.file,
        line: obj.source.line,
        column: obj.source.column,
        field: 'info.title',
        kind: 'entity',
        id: obj.id,
      },
    ];
  };
  return {
    manifest: {
      parse: parseMerge((doc, ctx) => whole.manifest.parse(doc, ctx)),
      managedKeys: declared,
      canonical: desiredState,
    },
    live: { canonical: liveState, checkAgainstLive },
    write: {
      sharedWrites: {
        dropped: (obj, before) => droppedPaths(before, declared(obj)),
        overlap: pathsOverlap,
        // Replace mode records the descriptor's top-level keys, the tag among them; merge never records the tag.
        claimsWhole: (keys) => keys.includes(TAG_PATH),
        // The descriptor of an archived declared entity is read by its tag (`merge-live.ts`).
        archivedUnreadable: (live) => live.state.descriptorUnreadable,
        // Sources writing into an entity they do not own name themselves on it (`merge.ts`, `claimKeyOf`).
        claimants: (live) => claimantsOf(live.state.descriptor),
        claim: (sourceId) => ({ key: claimPathOf(sourceId), value: { source: sourceId } }),
      },
    },
  };
};
