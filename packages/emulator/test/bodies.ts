/**
 * Zod schemas for the emulator bodies the tests read fields of (with `bodyOf`). Each names only the
 * fields a test reads; objects are loose, so a parsed body keeps every field it came with.
 */
import { z } from 'zod';

/** A list body holding its items under `key` (`{ entities: [...] }`, `{ apiKeys: [...] }`, ...). */
export const listOf = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  z.looseObject({ [key]: z.array(item) } as Record<K, z.ZodArray<T>>);

/** A paged list body: the items under `key`, and the page counters. */
export const pageOf = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  listOf(key, item).extend({ page: z.number(), total: z.number(), totalPages: z.number() });

/** Any body with a `total` count. */
export const Counted = z.looseObject({ total: z.number() });

/** The vendor error body (`{ type, message, httpStatus }`); tests read its message. */
export const ErrorBody = z.looseObject({ message: z.string() });

/** Anything identified by a tag (entities in lists, scaffolders, scorecards). */
export const Tagged = z.looseObject({ tag: z.string() });

/** An entity as `GET /catalog/{tagOrId}` and archive/unarchive answer it. */
export const Entity = z.looseObject({ id: z.string(), tag: z.string(), isArchived: z.boolean() });

/** An entity descriptor (`GET /catalog/{tagOrId}/openapi`, items of `/catalog/descriptors`). */
export const Descriptor = z.looseObject({ info: z.looseObject({ 'x-cortex-tag': z.string() }) });

/** The answer of `POST`/`PATCH /open-api`. */
export const ValidationResult = z.looseObject({
  ok: z.boolean(),
  violations: z.array(z.looseObject({ pointer: z.string() })),
});

/** An entity type definition. */
export const EntityType = z.looseObject({ type: z.string() });

/** An Initiative, with the fields the tests read. */
export const Initiative = z.looseObject({
  cid: z.string(),
  name: z.string(),
  isDraft: z.boolean(),
  emphasizedLevels: z.array(z.unknown()),
  dateCreated: z.string(),
  dateUpdated: z.string(),
});

/** A Scaffolder template. */
export const Scaffolder = z.looseObject({ id: z.string(), tag: z.string() });

/** A catalog page. */
export const CatalogPage = z.looseObject({ slug: z.string(), type: z.string(), isCortexManaged: z.boolean() });

/** A scorecard as `GET /scorecards/{tag}` nests it. */
export const Scorecard = z.looseObject({
  tag: z.string(),
  name: z.string(),
  levels: z.array(z.unknown()),
  rules: z.array(z.looseObject({ expression: z.string() })),
});

/** An API key as listed (never with its value). */
export const ApiKeyRecord = z.looseObject({ cid: z.string(), name: z.string() });

/** A dependency edge as listed. */
export const Dependency = z.looseObject({ callerTag: z.string() });
