/** What `--help` adds below the commands: the environment, the defaults, and what the API key must be allowed to do. */
import { DEFAULT_BASE_URL } from '../api/request-parts.js';

export const ENVIRONMENT_HELP = `
Environment variables (a flag wins over its variable, a variable over cortex-sync.yaml,
false included: cortex-sync.yaml proposes, the operator decides):
  CORTEX_API_KEY          the API key (plan, apply, export, watch); never from cortex-sync.yaml
  CORTEX_API_KEY_FILE     a file holding the key (a mounted secret): a regular file outside the
                          manifest root, surrounding whitespace dropped; not with CORTEX_API_KEY
  CORTEX_BASE_URL         API base URL without /api/v1 (default ${DEFAULT_BASE_URL}); --base-url
  CORTEX_SYNC_DIR         manifest root (default: the current directory); --dir
  CORTEX_SYNC_SOURCE_ID   this repository's source id (default: derived from the git remote); --source-id
  CORTEX_SYNC_PRUNE       true/false: remove managed objects whose manifests are gone (default false);
                          --prune / --no-prune
  CORTEX_SYNC_PRUNE_ENTITIES    archive/delete: what prune does to an entity (default archive)
  CORTEX_SYNC_MAX_DELETE_SHARE  0–1: refuse a prune above this share of managed objects (default 0.25;
                                cortex-sync.yaml may lower it, never raise it)
  CORTEX_SYNC_MAX_DELETE_COUNT  refuse a prune of more objects than this
  CORTEX_SYNC_PROTECT     kind/id patterns never pruned, comma-separated (added to the file's)
  CORTEX_SYNC_FORCE_ENTITY_TYPE_SCHEMA  true: apply entity type changes that break entities;
                          --force-entity-type-schema (never from cortex-sync.yaml)
  CORTEX_SYNC_CONCURRENCY changes applied at once, 1–64 (default 8); --concurrency
  CORTEX_RATE_LIMIT       requests per minute the client allows itself (default 1000)
  CORTEX_SYNC_ORIGIN      where this run comes from, bound to the source id at its first apply
                          (default: GITHUB_REPOSITORY or the git remote, else the manifest root's path)
  CORTEX_SYNC_LEASE_WAIT  seconds an apply waits for another apply of the same source (default 120)
  CORTEX_SYNC_TIMEOUT     seconds one request waits for an answer before it is retried or fails (default 30)
  HTTPS_PROXY, HTTP_PROXY the proxy for https / http requests (the API, the Action's GitHub calls):
                          http://host:port or http://user:password@host:port; HTTPS_PROXY falls
                          back to HTTP_PROXY; lower-case names win. A loopback API skips a proxy
                          that is not on loopback
  NO_PROXY                hosts sent past the proxy, comma-separated: host, host:port, .domain, *
  CORTEX_SYNC_STRICT      true/false: every warning is an error (default false); --strict / --no-strict
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
