/**
 * Scaffolder templates: `/api/v1/scaffolders` (the vendor's "Scaffolder templates"; not
 * in the vendor OpenAPI). POST upserts by `tag` (a body without a tag always creates, with a tag
 * derived from the name); PUT replaces an existing template (404 when missing) and renames it when
 * the body carries another tag. Omitted fields reset to their defaults. Bodies are JSON or YAML;
 * a GET with `Accept: application/yaml` answers YAML.
 */
import { stringify as toYaml } from 'yaml';
import { z } from 'zod';
import { type EmulatorEnv, type EmulatorResponse, errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { hashOrder, isoSeconds } from '../util.js';
import { readBody } from './initiatives-body.js';

/** The vendor's rule: lowercase letters, digits, dashes; not starting or ending with a dash. */
export const SCAFFOLDER_TAG_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** The tag derived from a name when none is given: lower-case, non-alphanumerics → dashes, trimmed. */
export const deriveScaffolderTag = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

const githubLocator = z.object({
  type: z.literal('GITHUB'),
  org: z.string().min(1),
  repoName: z.string().min(1),
  url: z.url().optional(),
});
/** Other providers' locator fields are unknown: only `type` is checked, the rest kept. */
const otherLocator = z.looseObject({ type: z.enum(['GITLAB', 'BITBUCKET', 'AZURE_DEVOPS']) });

/** The create / replace body. Fields left out take the defaults below. */
export const scaffolderRequestSchema = z.object({
  tag: z
    .string()
    .regex(SCAFFOLDER_TAG_PATTERN, 'tag: lowercase letters, digits and dashes, not starting or ending with a dash')
    .optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  /** The templating engine, e.g. COOKIECUTTER. */
  type: z.string().min(1),
  labels: z.array(z.string()).default([]),
  repoLocator: z.discriminatedUnion('type', [githubLocator, otherLocator]),
  requireNewService: z.boolean().default(false),
  requirePullRequest: z.boolean().default(false),
  createYamlFile: z.boolean().default(false),
  showReadme: z.boolean().default(false),
  strictAliasUsage: z.boolean().default(false),
});
export type ScaffolderRequest = z.infer<typeof scaffolderRequestSchema>;

/** A template as stored: every field resolved, plus the Cortex-generated `id` and timestamps. */
export interface StoredScaffolder extends Omit<ScaffolderRequest, 'tag'> {
  id: string;
  tag: string;
  /** ISO 8601 timestamps. */
  dateCreated: string;
  dateUpdated: string;
}

/** The scaffolder-templates slice of the emulator state (an array: JSON-serializable, no prototype keys). */
export interface ScaffoldersState {
  items: StoredScaffolder[];
}

/** The part of the emulator state the scaffolder routes read. */
export interface ScaffoldersSlice {
  scaffolders: ScaffoldersState;
}

/** A fresh, empty scaffolder-templates slice. */
export const initialScaffoldersState = (): ScaffoldersState => ({ items: [] });

/** Finds a template by its tag or its Cortex-generated id. */
export const findScaffolder = (state: ScaffoldersSlice, tagOrId: string): StoredScaffolder | undefined =>
  state.scaffolders.items.find((s) => s.id === tagOrId) ?? state.scaffolders.items.find((s) => s.tag === tagOrId);

/** The wire form: the stored fields in a stable order. */
export const renderScaffolder = (template: StoredScaffolder): Record<string, unknown> => ({
  id: template.id,
  tag: template.tag,
  name: template.name,
  ...(template.description !== undefined ? { description: template.description } : {}),
  type: template.type,
  labels: template.labels,
  repoLocator: template.repoLocator,
  requireNewService: template.requireNewService,
  requirePullRequest: template.requirePullRequest,
  createYamlFile: template.createYamlFile,
  showReadme: template.showReadme,
  strictAliasUsage: template.strictAliasUsage,
  dateCreated: template.dateCreated,
  dateUpdated: template.dateUpdated,
});

/** JSON, or YAML when the client asks for it. */
const respond = (status: number, template: StoredScaffolder, accept: string | undefined): EmulatorResponse =>
  /\b(application|text)\/(x-)?yaml\b/.test(accept ?? '')
    ? { status, body: toYaml(renderScaffolder(template)), contentType: 'application/yaml' }
    : { status, body: renderScaffolder(template) };

const notFound = (tagOrId: string): EmulatorResponse =>
  errorResponse(404, 'NOT_FOUND', `Scaffolder template '${tagOrId}' not found`);

/** The stored form of a body, keeping `existing`'s identity (id, creation date) when replacing. */
const toStored = (
  body: ScaffolderRequest,
  tag: string,
  existing: StoredScaffolder | undefined,
  env: EmulatorEnv,
): StoredScaffolder => {
  const now = isoSeconds(env.now());
  const { tag: _tag, ...fields } = body;
  return {
    ...fields,
    id: existing?.id ?? env.newId('sf'),
    tag,
    dateCreated: existing?.dateCreated ?? now,
    dateUpdated: now,
  };
};

/** A tag derived from `name` that no other template holds (`name`, `name-2`, …); `null` if none can be derived. */
const freshDerivedTag = (state: ScaffoldersSlice, name: string): string | null => {
  const base = deriveScaffolderTag(name);
  if (base === '') return null;
  let tag = base;
  for (let n = 2; state.scaffolders.items.some((s) => s.tag === tag); n += 1) tag = `${base}-${n}`;
  return tag;
};

const WRITE: RouteDef<ScaffoldersSlice>['permission'] = ['CONFIGURE_SCAFFOLDER'];

/** Routes of the Scaffolder-templates resource (reads need any valid key). */
export const scaffolderRoutes: RouteDef<ScaffoldersSlice>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/scaffolders',
    permission: null,
    handle: (req, state) =>
      pagedResponse(hashOrder(state.scaffolders.items, (s) => s.id).map(renderScaffolder), req.query, 'scaffolders'),
  },
  {
    method: 'GET',
    pattern: '/api/v1/scaffolders/:tagOrId',
    permission: null,
    handle: (req, state) => {
      const template = findScaffolder(state, req.params.tagOrId ?? '');
      return template === undefined ? notFound(req.params.tagOrId ?? '') : respond(200, template, req.headers.accept);
    },
  },
  {
    method: 'POST',
    pattern: '/api/v1/scaffolders',
    permission: WRITE,
    handle: (req, state, env) => {
      const body = readBody(req, scaffolderRequestSchema, { allowYaml: true });
      if (!body.ok) return body.response;
      const existingIndex =
        body.value.tag === undefined ? -1 : state.scaffolders.items.findIndex((s) => s.tag === body.value.tag);
      const existing = state.scaffolders.items[existingIndex];
      const tag = body.value.tag ?? freshDerivedTag(state, body.value.name);
      if (tag === null) {
        return errorResponse(400, 'BAD_REQUEST', `No tag given and none can be derived from name '${body.value.name}'`);
      }
      const stored = toStored(body.value, tag, existing, env);
      if (existing === undefined) state.scaffolders.items.push(stored);
      else state.scaffolders.items[existingIndex] = stored;
      return respond(200, stored, req.headers.accept);
    },
  },
  {
    method: 'PUT',
    pattern: '/api/v1/scaffolders/:tagOrId',
    permission: WRITE,
    handle: (req, state, env) => {
      const tagOrId = req.params.tagOrId ?? '';
      const existing = findScaffolder(state, tagOrId);
      if (existing === undefined) return notFound(tagOrId);
      const body = readBody(req, scaffolderRequestSchema, { allowYaml: true });
      if (!body.ok) return body.response;
      const tag = body.value.tag ?? existing.tag;
      if (state.scaffolders.items.some((s) => s.tag === tag && s.id !== existing.id)) {
        return errorResponse(409, 'CONFLICT', `Another Scaffolder template already has the tag '${tag}'`);
      }
      const stored = toStored(body.value, tag, existing, env);
      state.scaffolders.items[state.scaffolders.items.indexOf(existing)] = stored;
      return respond(200, stored, req.headers.accept);
    },
  },
  {
    method: 'DELETE',
    pattern: '/api/v1/scaffolders/:tagOrId',
    permission: WRITE,
    handle: (req, state) => {
      const existing = findScaffolder(state, req.params.tagOrId ?? '');
      if (existing === undefined) return notFound(req.params.tagOrId ?? '');
      state.scaffolders.items.splice(state.scaffolders.items.indexOf(existing), 1);
      return { status: 200 };
    },
  },
];
