/**
 * Synthetic repositories for the benchmark: N entities (teams, domains, services and one custom
 * entity type) with owners, groups, custom metadata and some `x-cortex-dependency`, N/10 API
 * dependency edges from N/50 callers, and a few of every other kind. Deterministic: the same N
 * and revision always give the same files.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** What a generated repository holds, for the naive baseline and the request budget. */
export interface RepositoryShape {
  entities: number;
  teams: number;
  domains: number;
  services: number;
  customEntities: number;
  /** Entities whose descriptor declares an `x-cortex-dependency`. */
  descriptorDependencies: number;
  callers: number;
  edges: number;
  entityTypes: number;
  catalogPages: number;
  initiatives: number;
  scaffolderTemplates: number;
  files: number;
}

export interface GenerateOptions {
  /** Total entities (teams, domains, services and custom-type entities together). */
  entities: number;
  /** Written into every entity's description: a new revision changes every entity. */
  revision?: number;
  sourceId?: string;
}

export const BENCH_SOURCE_ID = 'bench-catalog';
export const CUSTOM_ENTITY_TYPE = 'bench-datastore';
const OTHER_ENTITY_TYPES = ['bench-queue', 'bench-library'];
const EDGES_PER_CALLER = 5;
const LANGS = ['go', 'java', 'python', 'typescript', 'rust', 'kotlin'];
const ENGINES = ['postgres', 'mysql', 'dynamodb'];

const pad = (i: number): string => String(i).padStart(5, '0');
const teamTag = (i: number): string => `team-${pad(i)}`;
const domainTag = (i: number): string => `domain-${pad(i)}`;
const serviceTag = (i: number): string => `svc-${pad(i)}`;
const storeTag = (i: number): string => `store-${pad(i)}`;

/** How a repository of `entities` entities is split. */
export const shapeOf = (entities: number): RepositoryShape => {
  const teams = Math.max(4, Math.round(entities / 100));
  const domains = Math.max(2, Math.round(entities / 200));
  const customEntities = Math.round(entities / 10);
  const services = entities - teams - domains - customEntities;
  if (services < 10) throw new RangeError(`at least 50 entities are needed, got ${entities}`);
  const callers = Math.max(1, Math.round(entities / 50));
  const descriptorDependencies = [...Array(services).keys()].filter(hasDescriptorDependency(callers)).length;
  return {
    entities,
    teams,
    domains,
    services,
    customEntities,
    descriptorDependencies,
    callers,
    edges: callers * EDGES_PER_CALLER,
    entityTypes: 1 + OTHER_ENTITY_TYPES.length,
    catalogPages: 3,
    initiatives: 3,
    scaffolderTemplates: 3,
    files: 0,
  };
};

/** Every 10th service that is not an API caller declares one dependency in its descriptor. */
const hasDescriptorDependency =
  (callers: number) =>
  (i: number): boolean =>
    i >= callers && i % 10 === 0;

const yamlList = (items: readonly string[], indent: string): string => items.map((s) => `${indent}- ${s}\n`).join('');

const teamYaml = (i: number, rev: number): string =>
  `openapi: 3.0.1
info:
  title: Team ${i}
  description: Benchmark team ${i} (revision ${rev}).
  x-cortex-tag: ${teamTag(i)}
  x-cortex-type: team
  x-cortex-groups:
    - bench
  x-cortex-custom-metadata:
    cost-center: CC-${100 + i}
  x-cortex-team:
    members:
      - name: Member ${i}
        email: member-${i}@example.com
        notificationsEnabled: true
`;

const domainYaml = (i: number, shape: RepositoryShape, rev: number): string =>
  `openapi: 3.0.1
info:
  title: Domain ${i}
  description: Benchmark domain ${i} (revision ${rev}).
  x-cortex-tag: ${domainTag(i)}
  x-cortex-type: domain
  x-cortex-owners:
    - type: group
      name: ${teamTag(i % shape.teams)}
      provider: CORTEX
  x-cortex-groups:
    - bench
`;

const serviceYaml = (i: number, shape: RepositoryShape, rev: number): string => {
  const lang = LANGS[i % LANGS.length] ?? 'go';
  let text = `openapi: 3.0.1
info:
  title: Service ${i}
  description: Benchmark service ${i} (revision ${rev}).
  x-cortex-tag: ${serviceTag(i)}
  x-cortex-type: service
  x-cortex-owners:
    - type: group
      name: ${teamTag(i % shape.teams)}
      provider: CORTEX
    - type: email
      email: oncall-${i % 50}@example.com
  x-cortex-groups:
${yamlList([`tier-${i % 3}`, `lang-${lang}`], '    ')}  x-cortex-custom-metadata:
    tier: ${i % 3}
    cost-center: CC-${1000 + (i % 97)}
    bench-index: ${i}
  x-cortex-git:
    github:
      repository: example/${serviceTag(i)}
  x-cortex-parents:
    - tag: ${domainTag(i % shape.domains)}
`;
  if (hasDescriptorDependency(shape.callers)(i)) {
    text += `  x-cortex-dependency:
    - tag: ${serviceTag((i + 1) % shape.services)}
      method: GET
      path: /v1/items/${i}
      description: Reads items.
`;
  }
  return text;
};

const storeYaml = (i: number, shape: RepositoryShape, rev: number): string =>
  `openapi: 3.0.1
info:
  title: Store ${i}
  description: Benchmark datastore ${i} (revision ${rev}).
  x-cortex-tag: ${storeTag(i)}
  x-cortex-type: ${CUSTOM_ENTITY_TYPE}
  x-cortex-owners:
    - type: group
      name: ${teamTag(i % shape.teams)}
      provider: CORTEX
  x-cortex-groups:
    - bench
  x-cortex-custom-metadata:
    backup: ${i % 2 === 0 ? 'daily' : 'hourly'}
  x-cortex-definition:
    engine: ${ENGINES[i % ENGINES.length]}
    version: "${10 + (i % 7)}"
`;

/** Edges of caller `c`: five callees among the services after the callers. */
const dependencyYaml = (c: number, shape: RepositoryShape): string => {
  const span = shape.services - shape.callers;
  const lines = [`callerTag: ${serviceTag(c)}`, 'dependencies:'];
  for (let e = 0; e < EDGES_PER_CALLER; e++) {
    const callee = shape.callers + ((c * EDGES_PER_CALLER + e) % span);
    lines.push(`  - tag: ${serviceTag(callee)}`);
    if (e % 2 === 0) lines.push('    method: POST', `    path: /v1/calls/${e}`);
    if (e % 3 === 0) lines.push(`    description: Edge ${e} of caller ${c}.`);
  }
  return `${lines.join('\n')}\n`;
};

const entityTypeYaml = (type: string, name: string): string =>
  `type: ${type}
name: ${name}
description: Benchmark entity type ${type}.
schema:
  type: object
  ${type === CUSTOM_ENTITY_TYPE ? 'required: [engine]\n  ' : ''}properties:
    engine:
      type: string
    version:
      type: string
`;

const catalogPageYaml = (i: number): string =>
  `slug: bench-page-${i}
name: Bench page ${i}
description: Benchmark catalog page ${i}.
iconTag: Cortex-builtin::Database
isDraft: false
type: FILTER
filter:
  types:
    include: [${i === 0 ? CUSTOM_ENTITY_TYPE : 'service'}]
`;

const initiativeYaml = (i: number): string =>
  `name: Bench initiative ${i}
description: Benchmark Initiative ${i}.
scorecardTag: production-readiness
targetDate: "2030-12-31"
isDraft: false
emphasizedLevels:
  - rank: ${i + 1}
emphasizedRules: []
filter:
  groups:
    include: [tier-${i}]
`;

const scaffolderYaml = (i: number): string =>
  `tag: bench-template-${i}
name: Bench template ${i}
description: Benchmark Scaffolder template ${i}.
type: COOKIECUTTER
labels: [bench]
repoLocator:
  type: GITHUB
  org: example
  repoName: bench-template-${i}
  url: https://github.com/example/bench-template-${i}
requireNewService: true
requirePullRequest: true
createYamlFile: true
`;

/** Every file of the repository, relative path → text. */
export const repositoryFiles = (options: GenerateOptions): { files: Map<string, string>; shape: RepositoryShape } => {
  const shape = shapeOf(options.entities);
  const rev = options.revision ?? 0;
  const files = new Map<string, string>();
  files.set('cortex-sync.yaml', `sourceId: ${options.sourceId ?? BENCH_SOURCE_ID}\nconcurrency: 8\n`);
  for (let i = 0; i < shape.teams; i++) files.set(`.cortex/teams/${teamTag(i)}.yaml`, teamYaml(i, rev));
  for (let i = 0; i < shape.domains; i++) files.set(`.cortex/domains/${domainTag(i)}.yaml`, domainYaml(i, shape, rev));
  for (let i = 0; i < shape.services; i++) {
    files.set(`.cortex/catalog/${serviceTag(i)}.yaml`, serviceYaml(i, shape, rev));
  }
  for (let i = 0; i < shape.customEntities; i++) {
    files.set(`.cortex/catalog/${storeTag(i)}.yaml`, storeYaml(i, shape, rev));
  }
  for (let c = 0; c < shape.callers; c++) {
    files.set(`.cortex/dependencies/${serviceTag(c)}.yaml`, dependencyYaml(c, shape));
  }
  files.set(`.cortex/entity-types/${CUSTOM_ENTITY_TYPE}.yaml`, entityTypeYaml(CUSTOM_ENTITY_TYPE, 'Bench datastore'));
  for (const type of OTHER_ENTITY_TYPES) files.set(`.cortex/entity-types/${type}.yaml`, entityTypeYaml(type, type));
  for (let i = 0; i < shape.catalogPages; i++)
    files.set(`.cortex/catalog-pages/bench-page-${i}.yaml`, catalogPageYaml(i));
  for (let i = 0; i < shape.initiatives; i++) files.set(`.cortex/initiatives/bench-${i}.yaml`, initiativeYaml(i));
  for (let i = 0; i < shape.scaffolderTemplates; i++) {
    files.set(`.cortex/scaffolders/bench-template-${i}.yaml`, scaffolderYaml(i));
  }
  shape.files = files.size;
  return { files, shape };
};

/** Writes the repository into `dir` (emptied first). */
export const generateRepository = async (dir: string, options: GenerateOptions): Promise<RepositoryShape> => {
  const { files, shape } = repositoryFiles(options);
  await rm(dir, { recursive: true, force: true });
  const dirs = new Set([...files.keys()].map((p) => dirname(join(dir, p))));
  for (const d of dirs) await mkdir(d, { recursive: true });
  const entries = [...files];
  for (let i = 0; i < entries.length; i += 256) {
    await Promise.all(entries.slice(i, i + 256).map(([path, text]) => writeFile(join(dir, path), text)));
  }
  return shape;
};

/** Gives service `i` of a generated repository a new title: a one-file change of one entity. */
export const retitleService = async (dir: string, i: number, title: string): Promise<void> => {
  const file = join(dir, '.cortex', 'catalog', `${serviceTag(i)}.yaml`);
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^ {2}title: .*$/m, `  title: ${title}`));
};
