/** The `entity` kind's settings (one entry each in the table of settings, `engine/settings.ts`). */
import { type AnySettingSpec, booleanValue, choiceValue, setting } from '../../core/settings.js';

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
  setting({
    key: 'entityWrites',
    title: 'how entities are written',
    help: 'replace: the whole descriptor (POST); merge: only the keys the manifests declare (PATCH), other keys stay',
    flag: '--entity-writes',
    commands: ['validate', 'plan', 'apply', 'watch'],
    input: {
      name: 'entity-writes',
      description:
        'replace (the whole descriptor, POST /api/v1/open-api) or merge (only the keys the manifests declare, PATCH; keys set in the UI, by integrations or by other sources stay). As --entity-writes. Empty: `entityWrites` in cortex-sync.yaml decides (default replace).',
    },
    env: 'CORTEX_SYNC_ENTITY_WRITES',
    // A file may choose merge (it is how a repository says it shares its entities), but merge
    // lets it write keys into entities another source owns: the plan's header says so.
    file: 'allowed',
    value: choiceValue(['replace', 'merge'] as const),
    default: 'replace',
    widensDeletes: true,
    widens: (mode) =>
      mode === 'merge'
        ? 'entities are merged (PATCH): keys this source declares are written into entities other sources own too, and keys it declared before are removed'
        : undefined,
  }),
  setting({
    key: 'forceConflicts',
    title: 'take over keys another source declares (merge)',
    help: 'in merge mode, take over entity keys another source declares instead of failing with field-conflict',
    flag: '--force-conflicts',
    commands: ['plan', 'apply', 'watch'],
    input: {
      name: 'force-conflicts',
      description:
        'In merge mode, take over entity keys another source declares instead of failing with field-conflict (as --force-conflicts; never read from cortex-sync.yaml). Set it for one run, then remove it.',
      default: false,
    },
    file: 'never',
    neverReason:
      "taking over keys another source declares is the operator's decision for one run (--force-conflicts), never a repository file's",
    value: booleanValue,
    default: false,
    widensDeletes: true,
    widens: (on) => (on ? 'entity keys other sources declare may be taken over (merge)' : undefined),
  }),
];
