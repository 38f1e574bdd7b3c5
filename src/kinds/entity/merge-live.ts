/**
 * Live reads of entities in merge mode (docs/adr-0004-co-ownership.md, "Existence"): the
 * descriptor list leaves archived entities out, and the catalog's details carry no descriptor, so
 * an archived entity is read as a summary (`descriptor: null`). Replace mode needs no more (its
 * write replaces the whole descriptor, and its plan compares what the summary says). Merge mode
 * compares the declared keys and the keys this source declared before against the live
 * descriptor: without it, an unarchive would plan every declared key as new and no dropped key as
 * going away. So the descriptor of every archived entity a manifest declares is read by its tag
 * (`GET /catalog/{tag}/openapi`, one request each, only for archived declared entities); when that
 * read fails the entity keeps `descriptor: null` and says why (`descriptorUnreadable`), and the
 * plan refuses to unarchive it (`merge-archived-unreadable`).
 */
import type { LiveObject } from '../../core/model.js';
import type { FetchContext } from '../types.js';
import type { EntityLive } from './live-state.js';
import { fetchEntitiesByTag, fetchEntityLive, readDescriptor } from './live.js';
import type { EntityDescriptor } from './schema.js';

/** Fills the descriptors of the archived entities among `live` whose tags are in `declared`. */
const readArchivedDescriptors = async (
  live: LiveObject<EntityLive>[],
  declared: ReadonlySet<string>,
  ctx: Pick<FetchContext, 'client'>,
): Promise<LiveObject<EntityLive>[]> => {
  await Promise.all(
    live.map(async (obj) => {
      if (obj.archived !== true || obj.state.descriptor !== null || !declared.has(obj.id)) return;
      try {
        const descriptor = await readDescriptor(ctx.client, obj.id);
        if (descriptor !== undefined) obj.state = { ...obj.state, descriptor };
        else obj.state = { ...obj.state, descriptorUnreadable: 'its descriptor read answered 404' };
      } catch (error) {
        obj.state = { ...obj.state, descriptorUnreadable: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  return live;
};

/** `fetchEntityLive`, and the descriptors of the archived entities the manifests declare. */
export const fetchMergeEntityLive = async (ctx: FetchContext<EntityDescriptor>): Promise<LiveObject<EntityLive>[]> =>
  readArchivedDescriptors(await fetchEntityLive(ctx), new Set(ctx.desired.map((d) => d.id)), ctx);

/** `fetchEntitiesByTag`, and the descriptors of the archived entities among them the manifests declare. */
export const fetchMergeEntitiesByTag = async (
  tags: readonly string[],
  ctx: Pick<FetchContext<EntityDescriptor>, 'client' | 'desired'>,
): Promise<LiveObject<EntityLive>[]> =>
  readArchivedDescriptors(await fetchEntitiesByTag(tags, ctx), new Set(ctx.desired.map((d) => d.id)), ctx);
