/**
 * The table of settings: the engine's own (below) and every kind's (`settings` beside its folder,
 * collected through the registry). Adding a setting is one entry here or in its kind's folder; the
 * file's schema (`config-file.ts`), the resolution (`config.ts`), `--help`, the commands' flags,
 * the Action's inputs and `action.yml`, the README's table and the plan's delete-scope header are
 * derived from it (docs/architecture.md, "Settings").
 */
import { DEFAULT_BASE_URL } from '../api/request-parts.js';
import { DEFAULT_MAX_DELETE_SHARE } from '../core/plan.js';
import {
  type AnySettingSpec,
  booleanValue,
  intValue,
  choiceValue,
  listValue,
  setting,
  shareValue,
  textValue,
} from '../core/settings.js';
import { z } from 'zod';
import type { AnyKindHandler } from '../kinds/types.js';
import { KIND_HANDLERS } from '../kinds/registry.js';

/**
 * The lowest request rate the file may set (requests per minute). Below it every read crawls (at
 * 1 a minute a plan of 200 objects takes hours): a pull request must not be able to do that to
 * every plan and the watcher. The operator's `CORTEX_RATE_LIMIT` may go lower.
 */
export const MIN_FILE_REQUESTS_PER_MINUTE = 60;

/** The client's default wait for one answer. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;

const percent = (n: number): string => `${Math.round(n * 1000) / 10} %`;

const SYNC: readonly ('plan' | 'apply' | 'watch')[] = ['plan', 'apply', 'watch'];

/** The engine's settings, in the order `--help` and the README list them. */
const ENGINE_SETTINGS: readonly AnySettingSpec[] = [
  setting({
    key: 'dir',
    title: 'manifest root',
    help: 'manifest root',
    flag: '--dir',
    commands: ['validate', 'plan', 'apply'],
    input: { name: 'dir', description: 'The manifest root, relative to the repository root.', default: '.' },
    env: 'CORTEX_SYNC_DIR',
    file: 'never',
    value: textValue(4096, '<dir>'),
    defaultText: 'the current directory',
  }),
  setting({
    key: 'sourceId',
    title: 'source id',
    help: "this repository's id in the ownership records",
    flag: '--source-id',
    commands: [...SYNC, 'export'],
    input: {
      name: 'source-id',
      description:
        "Identifies this repository in the workspace's ownership records (default sourceId in cortex-sync.yaml, else github.com/owner/repo, plus //dir for a subfolder).",
    },
    env: 'CORTEX_SYNC_SOURCE_ID',
    file: 'allowed',
    value: textValue(200, '<id>'),
    defaultText:
      "`GITHUB_REPOSITORY`, else the git `origin` remote; plus `//<folder>` when the manifest root is not the repository's root",
  }),
  setting({
    key: 'baseUrl',
    title: 'API base URL',
    help: 'API base address, without /api/v1',
    flag: '--base-url',
    commands: [...SYNC, 'export'],
    input: {
      name: 'base-url',
      description:
        "The Cortex API's base address (default CORTEX_BASE_URL, else https://api.getcortexapp.com). The key is only ever sent here: a file in the repository cannot redirect it.",
    },
    env: 'CORTEX_BASE_URL',
    file: 'never',
    neverReason:
      'the API key is sent only to a base URL the operator chooses (--base-url or CORTEX_BASE_URL), never to one a repository file names',
    value: textValue(2048, '<url>'),
    default: DEFAULT_BASE_URL,
  }),
  setting({
    key: 'origin',
    title: 'origin the source id is bound to (see Ownership)',
    help: 'where this run comes from, bound to the source id at its first apply',
    commands: [],
    env: 'CORTEX_SYNC_ORIGIN',
    file: 'never',
    value: textValue(2048, '<origin>'),
    defaultText:
      "`GITHUB_REPOSITORY` on `GITHUB_SERVER_URL`'s host, else the git `origin` remote (or the only remote) without credentials; plus `//<folder>`; without a git remote `path:<manifest root>`",
  }),
  setting({
    key: 'leaseWaitSeconds',
    title: 'how long an apply waits for another apply of the same source',
    help: 'seconds an apply waits for another apply of the same source',
    commands: [],
    env: 'CORTEX_SYNC_LEASE_WAIT',
    file: 'allowed',
    value: intValue(0, 3600),
    defaultText: '120',
    config: { key: 'leaseWaitMs', scale: 1000 },
  }),
  setting({
    key: 'requestTimeoutSeconds',
    title: 'how long one request waits for an answer (a hung server)',
    help: 'seconds one request waits for an answer before it is retried or fails',
    commands: [],
    env: 'CORTEX_SYNC_TIMEOUT',
    file: 'allowed',
    value: intValue(1, 600),
    default: DEFAULT_REQUEST_TIMEOUT_SECONDS,
    config: { key: 'requestTimeoutMs', scale: 1000 },
  }),
  setting({
    key: 'prune',
    title: 'prune',
    help: 'remove objects this repository manages whose manifests are gone',
    flag: '--prune',
    negatable: true,
    negatedHelp: 'never prune in this run, whatever cortex-sync.yaml or CORTEX_SYNC_PRUNE says',
    commands: SYNC,
    input: {
      name: 'prune',
      description:
        'Remove (entities are archived) objects this repository manages whose manifests are gone. The operator decides: this input is always set (default false), so `prune` in cortex-sync.yaml (which a pull request can edit) has no effect under the Action.',
      default: false,
    },
    env: 'CORTEX_SYNC_PRUNE',
    file: 'allowed',
    value: booleanValue,
    default: false,
    widensDeletes: true,
    widens: (on) => (on ? 'objects of this source whose manifests are gone are removed' : undefined),
  }),
  setting({
    key: 'maxDeleteShare',
    title: 'mass-delete guard: share of managed objects',
    help: 'refuse a prune above this share of managed objects',
    flag: '--max-delete-share',
    commands: SYNC,
    env: 'CORTEX_SYNC_MAX_DELETE_SHARE',
    file: 'lower-only',
    value: shareValue,
    default: DEFAULT_MAX_DELETE_SHARE,
    defaultText: '0.25 (25 %)',
    widensDeletes: true,
    widens: (share) =>
      share > DEFAULT_MAX_DELETE_SHARE
        ? `one apply may remove up to ${percent(share)} of the managed objects (default ${percent(DEFAULT_MAX_DELETE_SHARE)})`
        : undefined,
  }),
  setting({
    key: 'maxDeleteCount',
    title: 'mass-delete guard: count of objects',
    help: 'refuse a prune of more objects than this',
    flag: '--max-delete-count',
    commands: SYNC,
    env: 'CORTEX_SYNC_MAX_DELETE_COUNT',
    file: 'allowed',
    value: intValue(0),
    widensDeletes: true,
  }),
  setting({
    key: 'protect',
    title: 'never prune (patterns add up)',
    help: 'kind/id patterns never pruned (`*` wildcard), comma-separated',
    flag: '--protect',
    commands: SYNC,
    env: 'CORTEX_SYNC_PROTECT',
    file: 'add-only',
    value: listValue('<patterns>'),
    default: [],
    widensDeletes: true,
  }),
  setting({
    key: 'allowMassDelete',
    title: 'allow a prune above the mass-delete guard (one run)',
    help: 'allow a prune above the configured share or count of managed objects',
    flag: '--allow-mass-delete',
    commands: SYNC,
    input: {
      name: 'allow-mass-delete',
      description:
        'Allow a prune above the configured share or count of managed objects (never read from cortex-sync.yaml).',
      default: false,
    },
    file: 'never',
    neverReason: "lifting the mass-delete guard is the operator's decision for one run (--allow-mass-delete)",
    value: booleanValue,
    default: false,
    widensDeletes: true,
    widens: (on) => (on ? 'the share, count and whole-kind guards of prune are off' : undefined),
  }),
  setting({
    key: 'allowTakeover',
    title: 'take over objects or a source id of another source or origin',
    help: 'take over objects another source id manages',
    flag: '--allow-takeover',
    commands: SYNC,
    input: {
      name: 'allow-takeover',
      description:
        'Apply as a source id bound to another origin (the repository was renamed or moved), rebinding it to this repository (as --allow-takeover; never read from cortex-sync.yaml). Set it for one run, then remove it.',
      default: false,
    },
    file: 'never',
    neverReason: "taking over what another source manages is the operator's decision for one run (--allow-takeover)",
    value: booleanValue,
    default: false,
    widensDeletes: true,
    widens: (on) => (on ? 'objects and source ids of other sources or origins may be taken over' : undefined),
  }),
  setting({
    key: 'concurrency',
    title: 'concurrency',
    help: 'changes applied at once',
    flag: '--concurrency',
    commands: ['apply', 'watch'],
    env: 'CORTEX_SYNC_CONCURRENCY',
    file: 'allowed',
    value: intValue(1, 64),
    default: 8,
  }),
  setting({
    key: 'requestsPerMinute',
    title: 'rate limit (requests/minute)',
    help: 'requests per minute the client allows itself',
    flag: '--requests-per-minute',
    commands: [...SYNC, 'export'],
    env: 'CORTEX_RATE_LIMIT',
    file: 'allowed',
    fileSchema: z
      .int()
      .min(MIN_FILE_REQUESTS_PER_MINUTE, {
        error: `expected a whole number of at least ${MIN_FILE_REQUESTS_PER_MINUTE} (the lowest rate a repository file may set; the operator may set a lower one with CORTEX_RATE_LIMIT)`,
      })
      .describe(
        `at least ${MIN_FILE_REQUESTS_PER_MINUTE}: lower is an error naming the line; only CORTEX_RATE_LIMIT may go lower`,
      ),
    value: intValue(1),
    default: 1000,
  }),
  setting({
    key: 'strict',
    title: 'every warning is an error',
    help: 'every warning is an error',
    flag: '--strict',
    negatable: true,
    negatedHelp: 'warnings stay warnings, whatever cortex-sync.yaml or CORTEX_SYNC_STRICT says',
    commands: ['validate', ...SYNC],
    input: {
      name: 'strict',
      description:
        'Every warning is an error (as --strict). Empty: `strict` in cortex-sync.yaml decides (default false).',
    },
    env: 'CORTEX_SYNC_STRICT',
    file: 'allowed',
    value: booleanValue,
    default: false,
    omitDefault: true,
  }),
  setting({
    key: 'onDrift',
    title: 'what a heal does with drift (a value changed outside git)',
    help: "heal puts git's values back; pr proposes the live values as one pull request per source and holds them while it is open; report says so in metrics, /status and logs only",
    flag: '--on-drift',
    commands: ['watch'],
    input: {
      name: 'on-drift',
      description:
        "What `command: drift` does with objects changed outside git: heal (apply git's values), pr (open or update one pull request with the live values, written into the manifests in place) or report (outputs and the job summary only). Empty: `onDrift` in cortex-sync.yaml decides (default heal).",
    },
    env: 'CORTEX_SYNC_ON_DRIFT',
    file: 'allowed',
    value: choiceValue(['heal', 'pr', 'report'] as const),
    default: 'heal',
  }),
  setting({
    key: 'breakLease',
    title: "take this source's apply lease whoever holds it (one run)",
    help: "take this source's apply lease even if another apply holds it (prints whose lease it broke; that apply stops starting changes)",
    flag: '--break-lease',
    commands: ['apply'],
    file: 'never',
    neverReason: "breaking another apply's lease is the operator's decision for one run (--break-lease)",
    value: booleanValue,
    default: false,
    omitDefault: true,
  }),
  setting({
    key: 'allowEmpty',
    title: 'a manifest root with no manifest is empty on purpose',
    help: 'a manifest root with no manifest is an empty repository on purpose (else an error: a mistyped --dir must not look like one)',
    flag: '--allow-empty',
    commands: ['validate', 'plan', 'apply'],
    file: 'never',
    neverReason: 'an empty manifest root is accepted only by the operator (--allow-empty)',
    value: booleanValue,
    default: false,
    omitDefault: true,
  }),
];

/** Every kind's settings (`settings` of a configurable kind). */
const kindSettings = (kinds: readonly AnyKindHandler[]): AnySettingSpec[] =>
  kinds.flatMap((kind) => ('settings' in kind ? (kind.settings as readonly AnySettingSpec[]) : []));

/** The table: the engine's settings, then the kinds'; a key or name said twice is a programming error. */
export const settingsTable = (kinds: readonly AnyKindHandler[] = KIND_HANDLERS): readonly AnySettingSpec[] => {
  const table = [...ENGINE_SETTINGS, ...kindSettings(kinds)];
  const seen = new Set<string>();
  for (const spec of table)
    for (const name of [spec.key, spec.flag, spec.env, spec.input && `input ${spec.input.name}`])
      if (name !== undefined) {
        if (seen.has(name)) throw new Error(`the settings table names ${name} twice`);
        seen.add(name);
      }
  return table;
};

/** The table of the registry's kinds. */
export const SETTINGS: readonly AnySettingSpec[] = settingsTable();
