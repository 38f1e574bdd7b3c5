/**
 * Changes as the planner builds them, typed for a kind's IO half (`KindChange<S, L>`): a create
 * carries its manifest, an update or noop its manifest and live object, a removal its live object.
 */
import type { Change, DesiredObject, LiveObject } from '../../src/core/model.js';
import type { KindChange } from '../../src/kinds/types.js';

export type ChangeExtras = Partial<Pick<Change, 'adopt' | 'unarchive' | 'reason' | 'diff' | 'waitsFor'>>;

export const createOf = <S, L>(desired: DesiredObject<S>, extra: ChangeExtras = {}): KindChange<S, L> => ({
  kind: desired.kind,
  id: desired.id,
  action: 'create',
  diff: [],
  waitsFor: [],
  desired,
  ...extra,
});

export const updateOf = <S, L>(
  desired: DesiredObject<S>,
  live: LiveObject<L>,
  extra: ChangeExtras = {},
  action: 'update' | 'noop' = 'update',
): KindChange<S, L> => ({
  kind: desired.kind,
  id: desired.id,
  action,
  diff: [],
  waitsFor: [],
  desired,
  live,
  ...extra,
});

/** A create without `live`, else an update. */
export const writeOf = <S, L>(
  desired: DesiredObject<S>,
  live?: LiveObject<L>,
  extra: ChangeExtras = {},
): KindChange<S, L> => (live ? updateOf(desired, live, extra) : createOf(desired, extra));

export const removalOf = <S, L>(
  live: LiveObject<L>,
  action: 'delete' | 'archive' = 'delete',
  extra: ChangeExtras = {},
): KindChange<S, L> => ({ kind: live.kind, id: live.id, action, diff: [], waitsFor: [], live, ...extra });
