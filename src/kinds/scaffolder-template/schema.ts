/**
 * Scaffolder template schemas: the strict manifest (the template payload of
 * `POST /api/v1/scaffolders`) and the tolerant live shape.
 */
import { z } from 'zod';

/** The vendor's rule: lowercase letters, digits and dashes, not starting or ending with a dash. */
const SCAFFOLDER_TAG_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

const SCAFFOLDER_TAG_RULE = 'may hold only lowercase letters, digits and dashes, and must not start or end with a dash';

/** Provider-specific locator fields are scalars (`org`, `repoName`, `url`, a project or workspace name…). */
const locatorValue = z.union([z.string(), z.number(), z.boolean()]);

/**
 * Where the template repository is. GitHub's fields are known (`org`, `repoName`, `url`) and
 * checked strictly; the other providers' fields are not documented, so any scalar field is taken.
 */
const repoLocatorSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('GITHUB'),
    org: z.string().min(1),
    repoName: z.string().min(1),
    url: z.url().optional(),
  }),
  z.object({ type: z.literal('GITLAB') }).catchall(locatorValue),
  z.object({ type: z.literal('BITBUCKET') }).catchall(locatorValue),
  z.object({ type: z.literal('AZURE_DEVOPS') }).catchall(locatorValue),
]);

/**
 * One Scaffolder template manifest, identified by `tag`. Strict: a field the schema does not know
 * is an error (see the kind's readme for how to add one).
 */
export const scaffolderTemplateManifestSchema = z.strictObject({
  tag: z
    .string()
    .refine((tag) => SCAFFOLDER_TAG_PATTERN.test(tag), {
      error: (issue) => `${SCAFFOLDER_TAG_RULE} (got ${JSON.stringify(issue.input)})`,
    })
    .meta({ pattern: SCAFFOLDER_TAG_PATTERN.source }),
  name: z.string().refine((n) => n.trim() !== '', { error: 'must not be empty' }),
  description: z.string().optional(),
  /** The templating engine, e.g. `COOKIECUTTER`. */
  type: z
    .string()
    .refine((t) => /^[A-Z][A-Z0-9_]*$/.test(t), { error: 'is an upper-case engine name such as COOKIECUTTER' })
    .meta({ pattern: '^[A-Z][A-Z0-9_]*$' }),
  labels: z.array(z.string().min(1)).optional(),
  repoLocator: repoLocatorSchema,
  requireNewService: z.boolean().optional(),
  requirePullRequest: z.boolean().optional(),
  createYamlFile: z.boolean().optional(),
  showReadme: z.boolean().optional(),
  strictAliasUsage: z.boolean().optional(),
});

export type ScaffolderTemplateManifest = z.output<typeof scaffolderTemplateManifestSchema>;

/** A template as the API returns it; unknown fields (ids, dates, inputs) are kept and ignored. */
export const liveScaffolderTemplateSchema = z
  .object({
    tag: z.string().min(1),
    id: z.string().nullish(),
    cid: z.string().nullish(),
    name: z.string().nullish(),
    description: z.string().nullish(),
    type: z.string().nullish(),
    labels: z.array(z.string()).nullish(),
    repoLocator: z.record(z.string(), z.unknown()).nullish(),
    requireNewService: z.boolean().nullish(),
    requirePullRequest: z.boolean().nullish(),
    createYamlFile: z.boolean().nullish(),
    showReadme: z.boolean().nullish(),
    strictAliasUsage: z.boolean().nullish(),
  })
  .loose();

export type LiveScaffolderTemplate = z.output<typeof liveScaffolderTemplateSchema>;
