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
   * The type the target must have, as its kind's `typeOf` reads it (owners of provider CORTEX
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

/** How a kind whose objects several sources share key by key says which keys (see `KindModel.sharedWrites`). */
export interface SharedWrites<S> {
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
}

/** What prune does to a live object of a kind. */
export type PruneAction = 'delete' | 'archive';

/** Where another desired object declares a live object inside itself (see `KindModel.declaredWithin`). */
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
  /** The type of an object, desired or live (its `x-cortex-type`). */
  typeOf(obj: DesiredObject<S> | LiveObject<L>): string | undefined;
}

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
 * their type (`typedBy`, archived ones too; the API refuses) or name them (`names`; removing one
 * would break those objects): a prune keeps them, saying why (`core/prune-holds.ts`).
 */
export interface KeptWhileHeld {
  /** Why it is kept, for the message: "Cortex refuses to delete an entity type that entities still have". */
  refusal: string;
  /** How to free it, for the message: "delete them in Cortex, or give them another type". */
  remedy: string;
}

/**
 * The pure half of a kind. Every member is a function of its arguments: no IO, no clock (time
 * comes in through `ParseContext`).
 */
export interface KindModel<S = unknown, L = unknown> extends KindMeta {
  /** Managed: declared in manifests, planned and applied (the default). */
  readonly managed?: true;
  /**
   * The folders of `.cortex/` (at the manifest root) this kind reads manifests from (`catalog-pages`);
   * `ownsFile` says which files exactly. Layout messages name them. None: the kind has no folder.
   */
  readonly layoutFolders?: readonly string[];
  /** The strict manifest schema (one YAML document); also exported as JSON Schema for editors. */
  readonly manifestSchema: z.ZodType;
  /** Layout: does the manifest file at `relPath` (relative to the root, `/` separators) belong to this kind? */
  ownsFile(relPath: string): boolean;
  /** Validates one YAML document; one document may declare several objects (dependency edges). */
  parse(doc: ParsedDocument, ctx: ParseContext): ParseResult<S>;
  /**
   * The objects this one names; the planner orders by them and checks that they exist. A function
   * of the object alone (not of the run's settings): the reference check keeps it per object.
   */
  references(obj: DesiredObject<S>): ObjectReference[];
  /** Objects of this kind have a type that is an object of another kind (entities); other kinds leave it out. */
  readonly typedBy?: TypedBy<S, L>;
  /** Objects of this kind name an object of another kind that must outlive them (an Initiative's scorecard). */
  readonly names?: Names<S, L>;
  /** An object of this kind is not removed while objects still have it as their type or name it. */
  readonly keptWhileHeld?: KeptWhileHeld;
  /**
   * What of this desired object is reserved for cortex-sync's own records in the workspace, if
   * anything ("the tag `cortex-sync-lease-…`"): declaring it is an error and it is not planned.
   */
  reservedFor?(obj: DesiredObject<S>): string | undefined;
  /**
   * Ids of this kind may legitimately differ only in case or look alike (a dependency's id holds
   * an API path): the loader does not warn about look-alike ids of this kind.
   */
  readonly idsMayLookAlike?: boolean;
  /**
   * The parts of a declared object this source's manifest sets (an entity's descriptor keys:
   * `info.title`, `info.x-cortex-owners`), as the ownership record keeps them: another source may
   * set the rest of the same object. Kinds whose objects are wholly one source's leave it out.
   */
  managedKeys?(obj: DesiredObject<S>): string[];
  /**
   * Set when this kind writes only the keys its manifest declares (`managedKeys`), so that other
   * sources, the UI and integrations may set the rest of the same object (entities with
   * `entityWrites: merge`, docs/adr-0004-co-ownership.md). An object another source owns is then
   * written (these keys only), never refused as another's and never adopted; a key two sources
   * declare is a `field-conflict`; a key this source declared at its last apply and declares no
   * more is removed live (`Change.dropsKeys`).
   */
  readonly sharedWrites?: SharedWrites<S>;
  /** What an inbound custom webhook matches a declared object of this kind by (entities: tag and mappings). */
  webhookTarget?(obj: DesiredObject<S>): RoutableEntity | undefined;
  /** Canonical comparable form of a manifest: equal to `liveState` ⇔ nothing to do. */
  desiredState(obj: DesiredObject<S>): JsonValue;
  /**
   * Canonical comparable form of a live object. `desired` is the manifest it is compared with,
   * when there is one: where the API fills in or rewrites a value on its own (a default icon, a
   * default flag), only what the manifest states is compared, so no guessed server value matters.
   */
  liveState(obj: LiveObject<L>, desired?: DesiredObject<S>, dropped?: readonly string[]): JsonValue;
  /**
   * Plan-time problems of a declared object given what is live (e.g. declaring an object the
   * API manages itself). Errors refuse the plan.
   */
  checkAgainstLive?(obj: DesiredObject<S>, live: LiveObject<L> | undefined, ctx: LiveCheckContext): Diagnostic[];
  /**
   * What an update writes from the live object rather than the manifest (fields the manifest
   * leaves out that a whole-object write would otherwise reset), in words for the plan; shown as a
   * reason of the update (and so in its digest). Undefined: nothing is kept.
   */
  keptOnWrite?(obj: DesiredObject<S>, live: LiveObject<L>): string | undefined;
  /**
   * Problems across the whole declared set, offline and at plan (e.g. entities whose definition
   * breaks the schema of an entity type the repository declares). Errors refuse the plan.
   */
  checkDesiredSet?(desired: readonly DesiredObject[]): Diagnostic[];
  /**
   * `true` when the IO half sets `LiveObject.owner` itself from a marker on the object (entities).
   * Otherwise the engine's inventory record says which repository manages each object.
   */
  readonly ownershipOnObject?: boolean;
  /**
   * `true` when the server assigns an object's identity at its create (`LiveObject.serverId`, an
   * Initiative's cid) and a create is not idempotent: the ownership record keeps the server id of
   * each managed object, so that one a list leaves out is confirmed by a read by that id rather
   * than created a second time.
   */
  readonly serverAssignsIdentity?: boolean;
  /**
   * The kinds whose live objects this kind's references are judged against beyond the kept state
   * (an Initiative's scorecard: Cortex refuses it without that scorecard or its levels): a run that
   * reads only the changed objects (the watcher's incremental read) reads those it references again.
   */
  readonly referencesReadLive?: readonly KindName[];
  /** What prune does to a live object of this kind (a kind setting may choose it, e.g. entities). */
  readonly pruneAction: PruneAction;
  /**
   * A live object of this kind with no manifest of its own that another desired object declares
   * inside itself (an API dependency edge now listed in its caller's `x-cortex-dependency`):
   * where. The planner hands it over to that object instead of removing it.
   */
  declaredWithin?(
    live: LiveObject<L>,
    desiredOf: (key: ObjectKey) => DesiredObject | undefined,
  ): DeclaredWithin | undefined;
  /**
   * An update of this object and the write of an object that references it with an ordering
   * edge: the update goes first unless this says otherwise (an entity type whose new schema the
   * referring entity satisfies only once rewritten goes after it). Pure: decided from the
   * manifests and live state.
   */
  updateOrder?(
    update: { desired: DesiredObject<S>; live: LiveObject<L> },
    referrer: { desired: DesiredObject; live?: LiveObject },
  ): UpdateOrder;
  /**
   * Export: the manifest files that declare these live objects, laid out where `ownsFile` finds
   * them (which file each object is written to). Loading them back plans no change.
   */
  toManifestFiles?(live: readonly LiveObject<L>[]): ManifestFile[];
}

/** The planner's view of any kind (methods are bivariant, so every `KindModel<S, L>` fits). */
export type AnyKindModel = KindModel<unknown, unknown>;

/** Is this kind only read (not managed)? */
export const isReadOnly = (kind: KindMeta): kind is ReadOnlyKindModel =>
  (kind as { managed?: boolean }).managed === false;
