/**
 * What `--help` adds below the commands: the kinds it manages (derived from the registry, each
 * kind's name, title and folders), the environment (the settings' variables derived from the table
 * of settings, `engine/settings.ts`; the others by hand), the defaults, and what the API key must
 * be allowed to do.
 */
import type { KindModel } from '../core/kind-contract.js';
import type { AnySettingSpec } from '../core/settings.js';
import { SETTINGS } from '../engine/settings.js';
import { KIND_HANDLERS } from '../kinds/registry.js';

const WIDTH = 100;
const INDENT = 26;

/** `text` wrapped at `WIDTH`, its first line after `head`, the others indented. */
const wrapped = (head: string, text: string): string => {
  const lines: string[] = [];
  // A name too long for its column gets a line of its own.
  if (head.length + 1 > INDENT) lines.push(head);
  let line = head.length + 1 > INDENT ? ' '.repeat(INDENT) : head.padEnd(INDENT);
  for (const word of text.split(' ')) {
    if (line.length + word.length > WIDTH && line.trim() !== head.trim() && line.trim() !== '') {
      lines.push(line.trimEnd());
      line = ' '.repeat(INDENT);
    }
    line += `${word} `;
  }
  return [...lines, line.trimEnd()].join('\n');
};

const FILE_SAYS: Record<AnySettingSpec['file'], (key: string) => string> = {
  allowed: (key) => `${key} in cortex-sync.yaml`,
  'lower-only': (key) => `cortex-sync.yaml's ${key} may lower it, never raise it`,
  'add-only': (key) => `added to cortex-sync.yaml's ${key}`,
  never: () => 'never from cortex-sync.yaml',
};

/** One entry per setting with a variable: what it is, its default, its flag, what the file may do. */
export const settingsEnvironmentHelp = (table: readonly AnySettingSpec[]): string =>
  table
    .filter((spec) => spec.env !== undefined)
    .map((spec) => {
      const byDefault =
        spec.defaultText ??
        (typeof spec.default === 'string' || typeof spec.default === 'number' || typeof spec.default === 'boolean'
          ? String(spec.default)
          : undefined);
      const what = [
        ...(spec.value.expected.startsWith('a text') ? [] : [spec.value.expected]),
        ...(byDefault !== undefined ? [`default ${byDefault.replace(/`/g, '')}`] : []),
      ];
      const flags = spec.flag
        ? [spec.flag, ...(spec.negatable ? [`--no-${spec.flag.slice(2)}`] : [])].join(' / ')
        : undefined;
      const parts = [
        `${spec.help}${what.length > 0 ? ` (${what.join('; ')})` : ''}`,
        ...(flags !== undefined ? [flags] : []),
        FILE_SAYS[spec.file](spec.key),
      ];
      return wrapped(`  ${spec.env ?? ''}`, parts.join('; '));
    })
    .join('\n');

/** One line per managed kind: its name (what `export --kinds` and the JSON plan say), its title and its folders. */
export const kindsHelp = (kinds: readonly Pick<KindModel, 'kind' | 'title' | 'layout'>[]): string =>
  kinds
    .map((kind) => {
      const places = [
        ...(kind.layout.folders ?? []).map((f) => `.cortex/${f}/`),
        ...(kind.layout.elsewhere !== undefined ? [kind.layout.elsewhere] : []),
      ];
      return wrapped(`  ${kind.kind}`, places.length === 0 ? kind.title : `${kind.title}: ${places.join(', ')}`);
    })
    .join('\n');

export const ENVIRONMENT_HELP = `
Kinds it manages, in apply order (a manifest's folder says its kind; export --kinds takes the names):
${kindsHelp(KIND_HANDLERS)}

Environment variables (a flag wins over its variable, a variable over cortex-sync.yaml,
false included: cortex-sync.yaml proposes, the operator decides):
  CORTEX_API_KEY          the API key (plan, apply, export, watch); never from cortex-sync.yaml
  CORTEX_API_KEY_FILE     a file holding the key (a mounted secret): a regular file outside the
                          manifest root, surrounding whitespace dropped; not with CORTEX_API_KEY
${settingsEnvironmentHelp(SETTINGS)}
  HTTPS_PROXY, HTTP_PROXY the proxy for https / http requests (the API, the Action's GitHub calls):
                          http://host:port or http://user:password@host:port; HTTPS_PROXY falls
                          back to HTTP_PROXY; lower-case names win. A loopback API skips a proxy
                          that is not on loopback
  NO_PROXY                hosts sent past the proxy, comma-separated: host, host:port, .domain, *
  CORTEX_SYNC_AUTO_APPROVE  true: apply without asking; without a terminal on stdin (CI, cron) apply
                          writes nothing unless this or --auto-approve is given
                          (apply FILE does not ask: the saved plan was the review)
  NO_COLOR                no colour even on a terminal

The watcher (cortex-sync watch; its --help has the flags):
  CORTEX_SYNC_LISTEN      address of the health, metrics and webhook port (default 127.0.0.1:8080)
  CORTEX_SYNC_ALLOWED_HOSTS  DNS names (comma-separated) /status, /metrics and the probes answer on,
                          besides IP addresses and localhost (the webhook answers on any)
  CORTEX_SYNC_CACHE_DIR   a folder per source: its checkout, lock and plan log (default a temp directory)
  CORTEX_SYNC_WEBHOOK_SECRET, CORTEX_SYNC_WEBHOOK_SECRET_FILE
                          the secret webhook deliveries are signed with (a value, or a file holding it)
  CORTEX_SYNC_GIT_TOKEN, CORTEX_SYNC_GIT_TOKEN_FILE
                          a token for an https git remote (a value, or a file holding it)
  CORTEX_SYNC_SSH_KEY_FILE          the private key for an ssh git remote
  CORTEX_SYNC_SSH_KNOWN_HOSTS_FILE  the known_hosts file that key's server is checked against

What the API key must be allowed to do (its role's permissions; the README's least-privilege table):
  validate, webhook-route nothing: offline, no key
  plan, apply --dry-run   EDIT_ENTITY_TYPES (the API needs it even to list entity types, so a
                          READ_ONLY key cannot plan), EDIT_ENTITIES (the API spec puts entity
                          and dependency reads under it), VIEW_CATALOGS, VIEW_INITIATIVES; GET only
  export                  the same as plan; GET only
  status                  EDIT_ENTITY_TYPES, EDIT_ENTITIES (the ownership record and lease); GET only
  apply                   EDIT_ENTITY_TYPES, VIEW_CATALOGS, EDIT_CATALOGS, EDIT_INITIATIVES,
                          EDIT_ENTITIES (also the ownership record and apply lease),
                          CONFIGURE_SCAFFOLDER, EDIT_SCORECARDS
  apply --prune           apply's, and ARCHIVE_ENTITIES (DELETE_ENTITIES instead with pruneEntities: delete)
  watch                   apply's (apply --prune's with --prune)
  emulator                none: it prints a key of its own

Outputs: plan and apply print the plan on stdout (--output text, json or markdown) and
diagnostics and progress on stderr. Exit codes: 0 ok, 1 error or refused, 2 changes
(plan --detailed-exitcode), 130/143/129 stopped by SIGINT/SIGTERM/SIGHUP.
`;
