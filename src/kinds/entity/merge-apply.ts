/**
 * Merge writes (`entityWrites: merge`, docs/adr-0004-co-ownership.md): create and update send only
 * the keys the manifest declares with `PATCH /api/v1/open-api` — arrays replaced (never
 * `appendArrays`), each key this source stopped declaring set to a delete marker chosen for the
 * request — so the request gives the same entity however often it is sent, and is retried like a
 * PUT. An update names `failIfEntityDoesNotExist=true` (an entity deleted since the plan is a 404,
 * never a half entity); a create writes the ownership marker (the creator owns existence), an
 * update never touches it.
 */
import type { DesiredObject, JsonObject, JsonValue } from '../../core/model.js';
import type { ApplyContext, KindChange } from '../types.js';
import {
  applyEntityChange,
  descriptorYaml,
  judgeDescriptorAnswer,
  OPENAPI_CONTENT_TYPE,
  unarchiveEntity,
  wireDescriptor,
} from './apply.js';
import type { EntityLive } from './live-state.js';
import { declaredKeyPaths, type MergePatch, mergePatch } from './merge.js';
import type { EntityDescriptor } from './schema.js';

type EntityWrite = Extract<KindChange<EntityDescriptor, EntityLive>, { desired: DesiredObject<EntityDescriptor> }>;

/** The PATCH a merge write of `change` sends (also what a located violation is placed in). */
export const mergePatchFor = (change: EntityWrite, sourceId: string | undefined, random?: () => string): MergePatch => {
  const wire = wireDescriptor(change.desired.spec, undefined);
  const live = (change.live?.state.descriptor ?? {}) as JsonValue;
  const creates = change.action === 'create';
  // A source writing into an entity it does not own names itself on it (`claimKeyOf`); the creator's marker names it.
  const claims = !creates && sourceId !== undefined && change.writesClaim === true;
  return mergePatch({
    tag: change.id,
    wire,
    declared: declaredKeyPaths(change.desired.doc.value, wire),
    dropped: change.dropsKeys ?? [],
    live,
    ...(creates && sourceId !== undefined ? { ownership: { source: sourceId } as JsonObject } : {}),
    ...(claims ? { claimant: sourceId } : {}),
    ...(random !== undefined ? { random } : {}),
  });
};

/** Sends the merge write of a create or update. */
export const mergeEntity = async (change: EntityWrite, ctx: ApplyContext): Promise<void> => {
  const patch = mergePatchFor(change, ctx.options.sourceId);
  const text = descriptorYaml(patch.body);
  const operation = `merge entity ${change.id}`;
  const path = '/api/v1/open-api';
  const res = await ctx.client.request<unknown>({
    operation,
    method: 'PATCH',
    path,
    query: {
      appendArrays: false,
      ...(change.action === 'create' ? {} : { failIfEntityDoesNotExist: true }),
      ...(patch.deleteMarker !== undefined ? { deleteMarkerValue: patch.deleteMarker } : {}),
    },
    body: text,
    contentType: OPENAPI_CONTENT_TYPE,
    // Declared keys replaced, dropped keys removed, arrays never appended: the same entity however often sent.
    idempotent: true,
  });
  judgeDescriptorAnswer(res, { operation, method: 'PATCH', path }, change, text, ctx);
};

/** Applies one entity change in merge mode: creates and updates are merge writes, the rest as in replace mode. */
export const applyMergedEntityChange = async (
  change: KindChange<EntityDescriptor, EntityLive>,
  ctx: ApplyContext,
): Promise<void> => {
  if (change.action !== 'create' && change.action !== 'update') return applyEntityChange(change, ctx);
  if (change.unarchive) await unarchiveEntity(change, ctx);
  await mergeEntity(change, ctx);
};
