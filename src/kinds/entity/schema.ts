/**
 * The strict manifest schema of an entity descriptor (`cortex.yaml`): an OpenAPI document whose
 * `info` block holds `title`, `x-cortex-tag` and the other `x-cortex-*` keys.
 *
 * Strict where we know the shape (owners, links, hierarchy, dependencies, git, team, slack,
 * relationships), loose for integration blocks and for keys that are not `x-cortex-*` (OpenAPI's
 * own `description`, `version`, `paths`, ...). Unknown `x-cortex-*` keys pass the schema and are
 * reported as warnings by `parseEntityDocument` (the API silently drops them).
 */
import { z } from 'zod';
import { MAPPINGS_KEY, MAPPINGS_KEY_DOCS } from '../../core/webhook-routing.js';
import { excerpt } from '../../source/excerpt.js';

export { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';

/**
 * A tag as the corpus uses it: non-empty, no leading/trailing whitespace, no control characters and
 * no unrendered template placeholder (`{{ x }}`, `${x}`, `$X`, `<x>`). Production repositories use
 * `@scope/name`, `UPPER` random ids, `_` and `.`, so those stay allowed.
 */
export const TAG_TEMPLATE = /\{\{|\}\}|\$\{|^\$|[<>]/;

/**
 * The longest tag accepted. Cortex documents no limit (neither its docs nor its OpenAPI give one),
 * so this is a generous guard, not the API's value: the corpus's longest tag is far shorter, and a
 * tag of thousands of characters is a pasted mistake that would fill every message naming it.
 */
const MAX_TAG_LENGTH = 256;

const tag = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(MAX_TAG_LENGTH, {
    error: (issue) => {
      const input = typeof issue.input === 'string' ? issue.input : '';
      return `is ${input.length.toLocaleString('en-US')} characters long, over the ${MAX_TAG_LENGTH} a tag may have ('${excerpt(input)}')`;
    },
  })
  .refine((value) => value.trim() === value, { error: 'must not start or end with whitespace' })
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  .refine((value) => !/[\u0000-\u001f\u007f]/.test(value), { error: 'must not contain control characters' })
  .refine((value) => !TAG_TEMPLATE.test(value), {
    error: 'looks like an unrendered template placeholder; render the template before syncing',
  });

const text = z.string();
const nonEmpty = z.string().min(1, { error: 'must not be empty' });

/** `[{tag}]`: parents, children, domain parents, relationship ends. */
const tagReference = z.strictObject({ tag });
const tagReferences = z.array(tagReference);

/** An enum that also accepts the UPPER spelling (the corpus mixes `group` and `GROUP` even inside one file). */
const anyCaseEnum = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum([...values, ...values.map((v) => v.toUpperCase())] as [string, ...string[]]);

const OWNER_TYPES = ['group', 'email', 'slack'] as const;
/** Union of the provider lists in the vendor docs and the vendor OpenAPI (they disagree on a few spellings). */
const OWNER_PROVIDERS = [
  'ACTIVE_DIRECTORY',
  'AZURE_DEVOPS',
  'BAMBOO_HR',
  'BAMBOOHR',
  'CORTEX',
  'GIT',
  'GITHUB',
  'GITLAB',
  'GOOGLE',
  'OKTA',
  'OPSGENIE',
  'SERVICE_NOW',
  'SLACK',
  'WORKDAY',
] as const;

/**
 * Fields each owner type carries besides `type`, `description` and `inheritance`. `tolerated`: what
 * real workspaces write in place of the required field and the API accepts (`{type: email, name: …}`,
 * `{type: slack, name: …}`); accepted, and `ownerOddities` warns.
 */
const OWNER_FIELDS: Record<
  (typeof OWNER_TYPES)[number],
  { required: string; allowed: readonly string[]; tolerated?: string }
> = {
  group: { required: 'name', allowed: ['name', 'provider'] },
  email: { required: 'email', allowed: ['email'], tolerated: 'name' },
  slack: { required: 'channel', allowed: ['channel', 'notificationsEnabled'], tolerated: 'name' },
};
const OWNER_SPECIFIC = ['name', 'provider', 'email', 'channel', 'notificationsEnabled'] as const;

const owner = z
  .strictObject({
    type: anyCaseEnum(OWNER_TYPES),
    name: nonEmpty.optional(),
    provider: z.enum(OWNER_PROVIDERS).optional(),
    /** `email: null` occurs in real workspaces (the API accepts it); `ownerOddities` warns. */
    email: nonEmpty.nullable().optional(),
    channel: nonEmpty.optional(),
    notificationsEnabled: z.boolean().optional(),
    description: text.optional(),
    inheritance: z.enum(['APPEND', 'FALLBACK', 'NONE']).optional(),
  })
  .superRefine((item, ctx) => {
    const type = item.type.toLowerCase() as (typeof OWNER_TYPES)[number];
    const fields = OWNER_FIELDS[type];
    const tolerated = fields.tolerated !== undefined && item[fields.tolerated as keyof typeof item] !== undefined;
    if (item[fields.required as keyof typeof item] === undefined && !tolerated) {
      ctx.addIssue({ code: 'custom', message: `an owner of type ${type} needs \`${fields.required}\``, path: [] });
    }
    for (const key of OWNER_SPECIFIC) {
      const allowed =
        fields.allowed.includes(key) ||
        (key === fields.tolerated && item[fields.required as keyof typeof item] === undefined);
      if (item[key] !== undefined && !allowed) {
        ctx.addIssue({
          code: 'custom',
          message: `\`${key}\` is not a field of ${type} owners (they use \`${fields.required}\`)`,
          path: [key],
        });
      }
    }
  });

const link = z.strictObject({ name: nonEmpty, type: nonEmpty, url: nonEmpty, description: text.optional() });

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const;
const dependency = z
  .strictObject({
    tag,
    method: anyCaseEnum(HTTP_METHODS).optional(),
    path: nonEmpty.optional(),
    description: text.optional(),
    metadata: z.record(z.string(), z.json()).optional(),
  })
  .superRefine((item, ctx) => {
    if ((item.method === undefined) !== (item.path === undefined)) {
      const missing = item.method === undefined ? 'method' : 'path';
      ctx.addIssue({
        code: 'custom',
        message: `\`method\` and \`path\` go together: \`${missing}\` is missing`,
        path: [],
      });
    }
  });

const gitRepository = z.strictObject({ repository: nonEmpty, basepath: text.optional(), alias: text.optional() });
const git = z.strictObject({
  github: gitRepository.optional(),
  gitlab: gitRepository.optional(),
  azure: gitRepository.extend({ project: nonEmpty }).optional(),
  bitbucket: gitRepository.optional(),
});

const team = z.strictObject({
  groups: z
    .array(z.strictObject({ name: nonEmpty, provider: z.enum(OWNER_PROVIDERS), description: text.optional() }))
    .optional(),
  members: z
    .array(
      z.strictObject({
        name: text.optional(),
        email: nonEmpty,
        notificationsEnabled: z.boolean().optional(),
        role: text.optional(),
        description: text.optional(),
      }),
    )
    .optional(),
});

const slack = z.strictObject({
  channels: z.array(
    z.strictObject({ name: nonEmpty, notificationsEnabled: z.boolean().optional(), description: text.optional() }),
  ),
});

/** `{pagerduty: {id, type}}`, `{opsgenie: {id, type}}`, ...: ids are strings, numbers or (Xero) null. */
const oncall = z.record(
  z.string(),
  z.looseObject({ id: z.union([z.string(), z.number()]).nullable().optional(), type: text.optional() }),
);

/**
 * Custom relationships. Two shapes occur: `{type, destinations: [{tag}]}` / `{type, sources: [{tag}]}`
 * and one edge per item `{type, tag}` (vendor service-version example).
 */
const relationship = z
  .strictObject({
    type: nonEmpty,
    tag: tag.optional(),
    destinations: tagReferences.optional(),
    sources: tagReferences.optional(),
  })
  .superRefine((item, ctx) => {
    if (item.tag === undefined && item.destinations === undefined && item.sources === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a relationship needs `destinations`, `sources` or `tag`', path: [] });
    }
  });

const jsonMap = z.record(z.string(), z.json());
/** Alternative webhook mapping values: strings (a number is matched by its text). */
const integrationMappings = z.array(z.union([nonEmpty, z.number()]));
/** Integration blocks we pass through untouched: any object (or list, for a few). */
const integrationBlock = z.union([jsonMap, z.array(z.json())]);

/** Integration `x-cortex-*` keys the vendor's Terraform provider and docs know; validated loosely. */
const INTEGRATION_KEYS = [
  'x-cortex-alerts',
  'x-cortex-apm',
  'x-cortex-bugsnag',
  'x-cortex-checkmarx',
  'x-cortex-ci-cd',
  'x-cortex-circle-ci',
  'x-cortex-coralogix',
  'x-cortex-dashboards',
  'x-cortex-firehydrant',
  'x-cortex-incident-io',
  'x-cortex-infra',
  'x-cortex-issues',
  'x-cortex-k8s',
  'x-cortex-launch-darkly',
  'x-cortex-microsoft-teams',
  'x-cortex-rollbar',
  'x-cortex-semgrep',
  'x-cortex-sentry',
  'x-cortex-servicenow',
  'x-cortex-slos',
  'x-cortex-snyk',
  'x-cortex-static-analysis',
  'x-cortex-veracode',
  'x-cortex-wiz',
] as const;

/** The other spelling of `x-cortex-link` (see the schema): known, so never a typo, but not kept. */
const LINKS_SPELLING = 'x-cortex-links';

/** `key:` with nothing after it is YAML null; treat it as "not set". */
const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

const integrationShape = Object.fromEntries(INTEGRATION_KEYS.map((key) => [key, optional(integrationBlock)])) as Record<
  (typeof INTEGRATION_KEYS)[number],
  z.ZodOptional<z.ZodNullable<typeof integrationBlock>>
>;

const entityInfoSchema = z.looseObject({
  title: nonEmpty,
  description: optional(text),
  'x-cortex-tag': tag,
  'x-cortex-type': nonEmpty.default('service'),
  'x-cortex-groups': optional(z.array(nonEmpty)),
  /** Legacy name of `x-cortex-groups`; accepted with a warning. A single group as a string is read as a one-item list. */
  'x-cortex-service-groups': optional(z.union([z.array(nonEmpty), nonEmpty.transform((group) => [group])])),
  'x-cortex-owners': optional(z.array(owner)),
  'x-cortex-link': optional(z.array(link)),
  /**
   * Not a typo of `x-cortex-link`, and not compared either: the vendor's OpenAPI names the field
   * `x-cortex-links` and the vendor's own CLI test data writes it (with links that have no `url`),
   * while its documentation and the API keep `x-cortex-link`. Passed as written, with a warning.
   */
  [LINKS_SPELLING]: z.json().optional(),
  'x-cortex-custom-metadata': optional(jsonMap),
  'x-cortex-dependency': optional(z.array(dependency)),
  'x-cortex-parents': optional(tagReferences),
  /** Legacy name of `x-cortex-parents`; accepted with a warning. */
  'x-cortex-domain-parents': optional(tagReferences),
  'x-cortex-children': optional(tagReferences),
  'x-cortex-git': optional(git),
  'x-cortex-team': optional(team),
  'x-cortex-oncall': optional(oncall),
  'x-cortex-slack': optional(slack),
  'x-cortex-relationships': optional(z.array(relationship)),
  'x-cortex-definition': optional(jsonMap),
  ...integrationShape,
  /** Values that route an inbound webhook payload to this entity (the vendor's inbound custom webhook); checked across the repository. */
  [MAPPINGS_KEY]: optional(integrationMappings),
  /** The same block as the vendor's webhook documentation spells it. */
  [MAPPINGS_KEY_DOCS]: optional(integrationMappings),
});

/** One entity descriptor document. Top-level OpenAPI keys (`paths`, `servers`, `components`, ...) pass through. */
export const entityDescriptorSchema = z.looseObject({
  /** The OpenAPI version string; an unquoted number (`3.0`) is tolerated with a warning. */
  openapi: z.union([z.string().min(1), z.number()]),
  info: entityInfoSchema,
});

/** A validated descriptor (`x-cortex-type` defaulted to `service`). */
export type EntityDescriptor = z.infer<typeof entityDescriptorSchema>;

/** Every `x-cortex-*` key the schema knows (anything else is an unknown key the API drops). */
export const KNOWN_CORTEX_KEYS: readonly string[] = Object.keys(entityInfoSchema.shape).filter(
  (key) => key.startsWith('x-cortex-') && key !== LINKS_SPELLING,
);

/** A value the API accepts but that is probably not what its author meant: where, and why. */
interface DescriptorOddity {
  /** Path inside `info`. */
  path: (string | number)[];
  message: string;
}

/**
 * Shapes real workspaces use that the schema accepts (the API takes them) but that deserve a
 * warning: owners written with `name` in place of `email`/`channel`, `email: null`, and a single
 * `x-cortex-service-groups` string. Looks at the raw `info` block; never throws.
 */
export const descriptorOddities = (info: unknown): DescriptorOddity[] => {
  if (typeof info !== 'object' || info === null || Array.isArray(info)) return [];
  const record = info as Record<string, unknown>;
  const oddities: DescriptorOddity[] = [];
  const owners = record['x-cortex-owners'];
  if (Array.isArray(owners)) {
    owners.forEach((item: unknown, i) => {
      if (typeof item !== 'object' || item === null) return;
      const o = item as Record<string, unknown>;
      const type = typeof o.type === 'string' ? o.type.toLowerCase() : '';
      const field = type === 'email' ? 'email' : type === 'slack' ? 'channel' : undefined;
      if (field !== undefined && o[field] === undefined && typeof o.name === 'string') {
        oddities.push({
          path: ['x-cortex-owners', i, 'name'],
          message: `a ${type} owner written with \`name\`; the API accepts it, but ${type} owners use \`${field}: ${o.name}\``,
        });
      }
      if (type === 'email' && 'email' in o && o.email === null) {
        oddities.push({
          path: ['x-cortex-owners', i, 'email'],
          message: 'an email owner with `email: null` names no one; the API accepts it',
        });
      }
    });
  }
  const serviceGroups = record['x-cortex-service-groups'];
  if (typeof serviceGroups === 'string') {
    oddities.push({
      path: ['x-cortex-service-groups'],
      message: `a single group written as a string; it is sent as the list [${serviceGroups}]`,
    });
  }
  return oddities;
};
