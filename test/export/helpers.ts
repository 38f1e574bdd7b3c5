/**
 * Export tests: the real CLI in-process against the emulator on 127.0.0.1, and a workspace made
 * the way a UI would make it (straight through the API, owned by no repository).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Emulator } from '../e2e/harness.js';

/** Sends one API request to the emulator as a user of the UI would; fails the test on an error status. */
export const callApi = async (
  emulator: Emulator,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<unknown> => {
  const res = await fetch(`${emulator.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${emulator.apiKey}`, 'Content-Type': contentType },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : undefined;
};

const descriptor = (text: string) => ['POST', '/api/v1/open-api', text, 'application/openapi;charset=UTF-8'] as const;

/**
 * A workspace with every kind and its awkward cases: a team, domains with a parent, a custom type
 * with `x-cortex-definition`, tags with `@`, `/` and `.`, a descriptor-declared and an API edge,
 * an archived entity, a catalog page whose type the server inferred, a draft Initiative and a
 * Scaffolder template left to the server's defaults.
 */
export const seedWorkspace = async (emulator: Emulator): Promise<void> => {
  await callApi(emulator, 'POST', '/api/v1/catalog/definitions', {
    type: 'ai-agent',
    name: 'AI Agent',
    description: 'An internally-built AI agent',
    schema: { type: 'object', required: ['model'], properties: { model: { type: 'string' } } },
  });
  const descriptors = [
    `openapi: 3.0.1
info:
  title: Platform
  x-cortex-tag: platform-team
  x-cortex-type: team
  x-cortex-team:
    members:
      - name: Grace Hopper
        email: grace@example.com
`,
    `openapi: 3.0.1
info:
  title: Money
  x-cortex-tag: money
  x-cortex-type: domain
`,
    `openapi: 3.0.1
info:
  title: Payments
  x-cortex-tag: payments.domain
  x-cortex-type: domain
  x-cortex-parents:
    - tag: money
`,
    `openapi: 3.0.1
info:
  title: Ledger
  x-cortex-tag: ledger
  x-cortex-type: service
`,
    `openapi: 3.0.1
info:
  title: Web app
  description: "on"
  x-cortex-tag: "@acme/web.app"
  x-cortex-type: service
  x-cortex-owners:
    - type: group
      name: platform-team
      provider: CORTEX
  x-cortex-groups: [tier-1, "yes"]
  x-cortex-parents:
    - tag: payments.domain
  x-cortex-custom-metadata:
    tier: 1
    code: "0777"
  x-cortex-dependency:
    - tag: ledger
      method: POST
      path: /v1/entries
`,
    `openapi: 3.0.1
info:
  title: Support bot
  x-cortex-tag: team/support-bot
  x-cortex-type: ai-agent
  x-cortex-definition:
    model: gpt-x
`,
    `openapi: 3.0.1
info:
  title: Old service
  x-cortex-tag: old-service
  x-cortex-type: service
`,
  ];
  for (const text of descriptors) await callApi(emulator, ...descriptor(text));
  await callApi(emulator, 'PUT', '/api/v1/catalog/old-service/archive');
  await callApi(emulator, 'PUT', '/api/v1/catalog/dependencies', {
    values: {
      '@acme/web.app': [{ tag: 'ledger', method: 'GET', path: '/v1/balance', description: 'Reads balances' }],
      'team/support-bot': [{ tag: '@acme/web.app' }],
    },
  });
  await callApi(emulator, 'POST', '/api/v1/catalog-pages', {
    slug: 'agents',
    name: 'Agents',
    iconTag: 'Cortex-builtin::Robot',
    isDraft: false,
    filter: { types: { include: ['ai-agent'] } },
  });
  await callApi(emulator, 'POST', '/api/v1/initiatives', {
    name: 'Agents ready',
    scorecardTag: 'production-readiness',
    targetDate: '2031-06-30',
    isDraft: true,
    emphasizedLevels: [{ rank: 2 }],
    emphasizedRules: [],
  });
  await callApi(emulator, 'POST', '/api/v1/scaffolders', {
    tag: 'agent-template',
    name: 'Agent template',
    type: 'COOKIECUTTER',
    labels: [],
    repoLocator: { type: 'GITHUB', org: 'acme', repoName: 'agent-template' },
  });
};

/** Every file under `root` (relative, `/` separators), sorted. */
export const listFiles = async (root: string): Promise<string[]> => {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split('\\').join('/'))
    .sort();
};

/** The files under `root` but the JSON Schemas export writes beside the manifests (`.cortex-sync-schemas/`). */
export const listManifestFiles = async (root: string): Promise<string[]> =>
  (await listFiles(root)).filter((file) => !file.startsWith('.cortex-sync-schemas/'));

/** `path → text` of every file under `root`. */
export const readTree = async (root: string): Promise<Map<string, string>> => {
  const out = new Map<string, string>();
  for (const file of await listFiles(root)) out.set(file, await readFile(join(root, file), 'utf8'));
  return out;
};

export interface PlanJson {
  summary: Record<string, number>;
  changes: { kind: string; id: string; action: string; adopt?: boolean; unarchive?: boolean; diff: unknown[] }[];
}
