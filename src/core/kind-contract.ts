/**
 * The pure half of a kind: everything the planner, the reference checks, the loader and `export`
 * need to know about a kind without touching the network. Each kind folder implements it together
 * with an IO half (`src/kinds/types.ts`); core depends only on this file, never on `src/kinds/`.
 * Core never names a kind: what differs between kinds is a member here, named for what it is.
 */
import type { z } from 'zod';
import type { DesiredObject, Diagnostic, JsonValue, KindName, LiveObject, ObjectKey, ParsedDocument } from './model.js';
import type { RoutableEntity } from './webhook-routing.js';

/** A reference from one manifest to another object: an ordering edge and a reference check. */
export interface ObjectReference {
  /** The target's kind: a managed kind, or a kind that is only read (`ReadOnlyKindModel`). */
  kind: KindName;
  id: string;
  /** Field path for messages (`info.x-cortex-owners[0].name`) and the same path for `ParsedDocument.locate`. */
  field: string;
  path: readonly PropertyKey[];
  /**
   * The type the target must have, as its kind's `manifest.typedBy.typeOf` reads it (owners of provider CORTEX
   * must be `team` entities).
   */
  type?: string;
  /**
   * `true`: an ordering edge — the target is created/updated first and deleted last (entity type →
   * entity, team → owned entity, parent → child, entity → dependency edge). `false`: only an
   * existence check (e.g. `x-cortex-children`, which would otherwise form a cycle with parents).
   */
  ordering: boolean;
}

export interface ParseResult<S> {
  objects: DesiredObject<S>[];
  diagnostics: Diagnostic[];
}

/** What parsing may depend on besides the document: the engine's clock, read once per run. */
export interface ParseContext {
  /** Milliseconds since the epoch (e.g. an Initiative's `targetDate` must lie after today). */
  now: number;
}

/** What a check against live state may know besides the two objects. */
export interface LiveCheckContext {
  /** The run's time (milliseconds since the epoch), when the planner was given it. */
  now?: number;
}

/**
 * One file `export` writes: its path in the repository layout (relative, `/` separators, e.g.
 * `.cortex/teams/platform.yaml`), the one YAML document it holds (keys in a readable order), and
 * the ids of the objects of this kind it declares (a dependency file holds every edge of one caller).
 */
export interface ManifestFile {
  path: string;
  document: JsonValue;
  ids: string[];
}

/** What prune does to a live object of a kind. */
export type PruneAction = 'delete' | 'archive';

/** Where another desired object declares a live object inside itself (see `KindPruneModel.declaredWithin`). */
export interface DeclaredWithin {
  by: DesiredObject;
  /** Field path in that object's manifest (for messages) and the same path for `locate`. */
  field: string;
  path: readonly PropertyKey[];
}

/** Which goes first: an update of an object, or a write of an object that references it. */
export interface UpdateOrder {
  /**
   * `first`: the update before the referrer's write (the default); `after`: the update waits for
   * it; `either`: both orders are accepted (it follows the object's other referrers: after them
   * when one of them needs `after`, else first).
   */
  order: 'first' | 'after' | 'either';
  /** Neither order will be accepted (a warning for the referrer's manifest): why, and what to do. */
  conflict?: string;
}

/**
 * What every registered kind says about itself, managed or only read (Renovate's managers export
 * their metadata the same way): its name (the registry's key), its title, and what it references.
 */
export interface KindMeta {
  readonly kind: KindName;
  /** Human name: "entity type", "Scaffolder template". */
  readonly title: string;
  /**
   * The kinds this kind's manifests may name (the kinds of its `references`). The apply order
   * puts every kind after the kinds it names and its removals before theirs (see
   * `src/kinds/order.ts`); a reference to a kind not listed here is a bug the conformance test finds.
   */
  readonly refersTo?: readonly KindName[];
  /**
   * Ids every workspace has of this kind, which are never declared, created or removed (the
   * built-in entity types `service`, `domain`, `team`): a reference to one always resolves.
   */
  readonly builtInIds?: readonly string[];
}

/**
 * A kind cortex-sync reads but does not manage (yet): manifests name its objects and those
 * references are checked against what the workspace has, whenever it could be read. It has no
 * manifests, no plan and no apply (objects manifests name before cortex-sync manages their kind).
 */
export interface ReadOnlyKindModel extends KindMeta {
  readonly managed: false;
}

/**
 * Objects of a kind whose type is itself an object of another kind (an entity and its entity type).
 */
export interface TypedBy<S, L> {
  /** The kind of the type objects (`entity-type`). */
  readonly kind: KindName;
  /**
   * The type of an object, desired or live (its `x-cortex-type`), or its several types of this
   * kind: each is held (a prune keeps it), ordered before the object and judged by a reference.
   */
  typeOf(obj: DesiredObject<S> | LiveObject<L>): string | readonly string[] | undefined;
}

/** A type an object has: an object of another kind (`manifest.typedBy`). */
export interface TypeOfObject {
  kind: KindName;
  id: string;
}

type Typed<S, L> = { readonly manifest: Pick<KindManifest<S, L>, 'typedBy'> };

/** The `manifest.typedBy` of a kind as a list: a kind may be typed by objects of several kinds. */
export const typingsOf = <S, L>(kind: Typed<S, L>): readonly TypedBy<S, L>[] => {
  const typedBy = kind.manifest.typedBy;
  if (typedBy === undefined) return [];
  return isTypedByList(typedBy) ? typedBy : [typedBy];
};

const isTypedByList = <S, L>(t: TypedBy<S, L> | readonly TypedBy<S, L>[]): t is readonly TypedBy<S, L>[] =>
  Array.isArray(t);

/**
 * Every type `obj` has (none when its kind is not typed, or it names none), in the order its kind
 * says, each once (a type said twice holds once: a prune's message counts each holder once).
 */
export const typesOf = <S, L>(kind: Typed<S, L>, obj: DesiredObject<S> | LiveObject<L>): TypeOfObject[] =>
  typingsOf(kind).flatMap((typing) => {
    const types = typing.typeOf(obj);
    if (types === undefined) return [];
    return [...new Set(typeof types === 'string' ? [types] : types)].map((id) => ({ kind: typing.kind, id }));
  });

/**
 * Objects of a kind that name an object of another kind which must outlive them (an Initiative and
 * the scorecard it is about): while one names it, a prune keeps that object (`core/prune-holds.ts`).
 */
export interface Names<S, L> {
  /** The kind of the named objects (`scorecard`). */
  readonly kind: KindName;
  /** The object it names, desired or live (an Initiative's `scorecardTag`). */
  idOf(obj: DesiredObject<S> | LiveObject<L>): string | undefined;
}

/**
 * A kind whose objects cannot be removed while objects of another kind hold them: have them as
 * their type (`manifest.typedBy`, archived ones too; the API refuses) or name them (`manifest.names`; removing one
 * would break those objects): a prune keeps them, saying why (`core/prune-holds.ts`).
 */
export interface KeptWhileHeld {
  /** Why it is kept, for the message: "Cortex refuses to delete an entity type that entities still have". */
  refusal: string;
  /** How to free it, for the message: "delete them in Cortex, or give them another type". */
  remedy: string;
}

/**
 * Layout: where this kind's manifests live in the repository.
 */
export interface KindLayout {
  /**
   * The folders of `.cortex/` (at the manifest root) this kind reads manifests from (`catalog-pages`);
   * `layout.ownsFile` says which files exactly. Layout messages name them. None: the kind has no folder.
   */
  readonly folders?: readonly string[];
  /**
   * Entities only (a descriptor may sit beside its code): the files it owns outside its folders,
   * in words for `--help` ("every cortex.yaml or cortex.yml").
   */
  readonly elsewhere?: string;
  /**
   * What names one object in its manifest, in markdown for the README's layout table (`slug`;
   * `info.x-cortex-tag`; caller, callee, method, path): the key a plan and the ownership record use.
   * Every kind with a folder states it (the README's generator refuses one without).
   */
  readonly identity?: string;
  /** Does the manifest file at `relPath` (relative to the root, `/` separators) belong to this kind? */
  ownsFile(relPath: string): boolean;
}

/**
 * Manifest: what a declared object is — its schema, how a document is parsed, what it names, its
 * canonical form, and the checks that need nothing live. The optional members are each one kind's.
 */
export interface KindManifest<S, L> {
  /** The strict manifest schema (one YAML document); also exported as JSON Schema for editors. */
  readonly schema: z.ZodType;
  /** Validates one YAML document; one document may declare several objects (dependency edges). */
  parse(doc: ParsedDocument, ctx: ParseContext): ParseResult<S>;
  /**
   * The objects this one names; the planner orders by them and checks that they exist. A function
   * of the object alone (not of the run's settings): the reference check keeps it per object.
   */
  references(obj: DesiredObject<S>): ObjectReference[];
  /** Canonical comparable form of a manifest: equal to `live.canonical` ⇔ nothing to do. */
  canonical(obj: DesiredObject<S>): JsonValue;
  /**
   * Problems across the whole declared set, offline and at plan. Errors refuse the plan. Used by
   * entities (integration mappings), entity types (entities whose definition breaks a declared
   * type's schema), dependencies (an edge declared twice) and scorecards (Initiatives checked
   * against the scorecard the repository declares).
   */
  checkDesiredSet?(desired: readonly DesiredObject[]): Diagnostic[];
  /**
   * Entities only: their type is an object of another kind (`x-cortex-type` → entity type). An
   * object may have several types, of one kind or of several (a list): see `typesOf`. The
   * reference check judges the type, a prune keeps a type still in use (`core/prune-holds.ts`).
   */
  readonly typedBy?: TypedBy<S, L> | readonly TypedBy<S, L>[];
  /**
   * Initiatives only: they name an object of another kind that must outlive them (the scorecard
   * an Initiative is about), so a prune keeps that scorecard (`core/prune-holds.ts`).
   */
  readonly names?: Names<S, L>;
  /**
   * Entities and entity types: what of this desired object is reserved for cortex-sync's own
   * records in the workspace, if anything ("the tag `cortex-sync-lease-…`"): declaring it is an
   * error and it is not planned.
   */
  reservedFor?(obj: DesiredObject<S>): string | undefined;
  /**
   * Dependencies only: ids of this kind may legitimately differ only in case or look alike (an
   * edge's id holds an API path, whose case matters): the loader does not warn about them.
   */
  readonly idsMayLookAlike?: boolean;
  /**
   * Entities only (one descriptor may be shared by several sources): the parts of a declared
   * object this source's manifest sets (`info.title`, `info.x-cortex-owners`), as the ownership
   * record keeps them; another source may set the rest. Kinds wholly one source's leave it out.
   */
  managedKeys?(obj: DesiredObject<S>): string[];
  /**
   * Entities only: what an inbound custom webhook matches a declared object by (its tag and
   * integration mappings), for `webhook-route`.
   */
  webhookTarget?(obj: DesiredObject<S>): RoutableEntity | undefined;
}

/**
 * Live: what a live object is as the planner compares it, and what the read must know about
 * identity and ownership. The IO half adds the reads themselves (`src/kinds/types.ts`).
 */
export interface KindLiveModel<S, L> {
  /**
   * Canonical comparable form of a live object. `desired` is the manifest it is compared with,
   * when there is one: where the API fills in or rewrites a value on its own (a default icon, a
   * default flag), only what the manifest states is compared, so no guessed server value matters.
   */
  canonical(obj: LiveObject<L>, desired?: DesiredObject<S>, dropped?: readonly string[]): JsonValue;
  /**
   * Plan-time problems of a declared object given what is live. Errors refuse the plan. Used by
   * catalog pages (a page Cortex manages itself cannot be declared) and Initiatives (a past
   * `targetDate` on an Initiative the plan writes).
   */
  checkAgainstLive?(obj: DesiredObject<S>, live: LiveObject<L> | undefined, ctx: LiveCheckContext): Diagnostic[];
  /**
   * Entities only: `true` when the IO half sets `LiveObject.owner` itself from a marker on the
   * object. Otherwise the engine's inventory record says which repository manages each object.
   */
  readonly ownershipOnObject?: boolean;
  /**
   * Initiatives only: `true` when the server assigns an object's identity at its create
   * (`LiveObject.serverId`, the cid) and a create is not idempotent: the ownership record keeps
   * the server id of each managed object, so that one a list leaves out is confirmed by a read by
   * that id rather than created a second time.
   */
  readonly serverAssignsIdentity?: boolean;
  /**
   * Initiatives only: the kinds whose live objects this kind's references are judged against
   * beyond the kept state (Cortex refuses an Initiative without its scorecard or its levels): a
   * run that reads only the changed objects (the watcher's incremental read) reads those again.
   */
  readonly referencesReadLive?: readonly KindName[];
}

/**
 * Write: what the planner must know about a write before the IO half makes it.
 */
export interface KindWriteModel<S, L> {
  /**
   * Scorecards only (their write is a whole-object upsert): what an update writes from the live
   * object rather than the manifest (fields the manifest leaves out that the write would
   * otherwise reset), in words for the plan; shown as a reason of the update (and in its digest).
   * Undefined: nothing is kept.
   */
  keptOnWrite?(obj: DesiredObject<S>, live: LiveObject<L>): string | undefined;
  /**
   * Entity types only: an update of this object and the write of an object that references it
   * with an ordering edge go in this order (the default is the update first; an entity type whose
   * new schema the referring entity satisfies only once rewritten goes after it). Pure: decided
   * from the manifests and live state.
   */
  updateOrder?(
    update: { desired: DesiredObject<S>; live: LiveObject<L> },
    referrer: { desired: DesiredObject; live?: LiveObject },
  ): UpdateOrder;
  /**
   * Entities with `entityWrites: merge` only (docs/adr-0004-co-ownership.md): the write sends only
   * the keys the manifest declares (`manifest.managedKeys`), so that other sources, the UI and
   * integrations may set the rest of the same object. An object another source owns is then
   * written (these keys only), never refused as another's and never adopted; a key two sources
   * declare is a `field-conflict`; a key this source declared at its last apply and declares no
   * more is removed live (`Change.dropsKeys`). The planner takes `core/shared-writes.ts`.
   */
  readonly sharedWrites?: SharedWrites<S, L>;
}

/** How a kind whose objects several sources share key by key says which keys (see `KindWriteModel.sharedWrites`). */
export interface SharedWrites<S, L = unknown> {
  /**
   * Of the keys this source declared at its last apply (`before`, from its ownership record), those
   * the object declares no more: removed by the write, shown in the plan as going away.
   */
  dropped(obj: DesiredObject<S>, before: readonly string[]): string[];
  /** Do two keys overlap (the same, or one inside the other), so that two sources writing them would overwrite each other? */
  overlap(a: string, b: string): boolean;
  /**
   * Do these recorded keys say that their source writes the whole object (a whole-object write
   * records its keys in another form: an entity's replace mode records the tag), so that every key
   * is its?
   */
  claimsWhole(keys: readonly string[]): boolean;
  /**
   * Why the keys of this archived live object could not be read (its read by identity failed), if
   * so: what unarchiving it and writing its keys would change cannot be shown, so it is refused.
   */
  archivedUnreadable?(live: LiveObject<L>): string | undefined;
  /**
   * The sources the live object names as writing keys into it (besides its owner): their records
   * say which keys, and a list of the records can leave one out, so the engine reads each such
   * record by its id when the list did not show it (`engine/fetch-live.ts`).
   */
  claimants?(live: LiveObject<L>): readonly string[];
  /**
   * Where a source names itself on an object it writes keys into without owning it, and the value
   * written there (`claimants` reads it back): planned as a change when missing.
   */
  claim?(sourceId: string): { key: string; value: JsonValue };
}

/**
 * Prune: what happens to a live object of this kind whose manifest is gone.
 */
export interface KindPruneModel<L> {
  /** What prune does to a live object of this kind (a kind setting may choose it, e.g. entities). */
  readonly action: PruneAction;
  /**
   * Entity types (entities have them as their type; the API refuses) and scorecards (Initiatives
   * name them): an object of this kind is not removed while objects still hold it.
   */
  readonly keptWhileHeld?: KeptWhileHeld;
  /**
   * Dependencies only: a live object of this kind with no manifest of its own that another
   * desired object declares inside itself (an edge now listed in its caller's
   * `x-cortex-dependency`): where. The planner hands it over to that object instead of removing it.
   */
  declaredWithin?(
    live: LiveObject<L>,
    desiredOf: (key: ObjectKey) => DesiredObject | undefined,
  ): DeclaredWithin | undefined;
}

/**
 * Export: how live objects become manifest files again.
 */
export interface KindExportModel<L> {
  /**
   * The manifest files that declare these live objects, laid out where `layout.ownsFile` finds
   * them (which file each object is written to). Loading them back plans no change.
   */
  toManifestFiles(live: readonly LiveObject<L>[]): ManifestFile[];
}

/**
 * The pure half of a kind, grouped by capability. Every member is a function of its arguments:
 * no IO, no clock (time comes in through `ParseContext`). A hook only one or a few kinds need is
 * optional and sits in the group it serves, saying which kind uses it and why.
 */
export interface KindModel<S = unknown, L = unknown> extends KindMeta {
  /** Managed: declared in manifests, planned and applied (the default). */
  readonly managed?: true;
  readonly layout: KindLayout;
  readonly manifest: KindManifest<S, L>;
  readonly live: KindLiveModel<S, L>;
  /** Optional: a kind with no write hooks leaves it out. */
  readonly write?: KindWriteModel<S, L>;
  readonly prune: KindPruneModel<L>;
  /** A kind without it exports nothing. */
  readonly export?: KindExportModel<L>;
}

/** The planner's view of any kind (methods are bivariant, so every `KindModel<S, L>` fits). */
export type AnyKindModel = KindModel<unknown, unknown>;

/** Is this kind only read (not managed)? */
export const isReadOnly = (kind: KindMeta): kind is ReadOnlyKindModel =>
  (kind as { managed?: boolean }).managed === false;
