/** The `entity` kind's settings (one entry each in the table of settings, `engine/settings.ts`). */
import { type AnySettingSpec, choiceValue, setting } from '../../core/settings.js';

export const ENTITY_SETTINGS: readonly AnySettingSpec[] = [
  setting({
    key: 'pruneEntities',
    title: 'what prune does to entities',
    help: 'what prune does to an entity: archive (reversible) or delete',
    flag: '--prune-entities',
    commands: ['plan', 'apply', 'watch'],
    env: 'CORTEX_SYNC_PRUNE_ENTITIES',
    file: 'allowed',
    value: choiceValue(['archive', 'delete'] as const),
    default: 'archive',
    widensDeletes: true,
    widens: (action) =>
      action === 'delete' ? 'pruned entities are deleted, not archived (a delete cannot be undone)' : undefined,
  }),
];
