/** The `entity-type` kind's settings (one entry each in the table of settings, `engine/settings.ts`). */
import { type AnySettingSpec, booleanValue, setting } from '../../core/settings.js';

export const ENTITY_TYPE_SETTINGS: readonly AnySettingSpec[] = [
  setting({
    key: 'forceEntityTypeSchema',
    title: 'apply entity-type changes that break entities',
    help: 'allow entity type schema changes that break existing entities',
    flag: '--force-entity-type-schema',
    commands: ['apply'],
    input: {
      name: 'force-entity-type-schema',
      description:
        "Apply an entity type's schema even when entities of that type would no longer validate (as --force-entity-type-schema; never read from cortex-sync.yaml).",
      default: false,
    },
    env: 'CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA',
    file: 'never',
    neverReason:
      'a schema change that breaks existing entities is forced only by the operator (--force-entity-type-schema or CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA=true), never by a repository file',
    value: booleanValue,
    default: false,
  }),
];
