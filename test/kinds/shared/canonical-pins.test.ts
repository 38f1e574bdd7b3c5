/**
 * The canonical forms of the catalog page, Initiative, scorecard and Scaffolder template kinds,
 * pinned byte for byte. A canonical form is what a plan compares and what a saved plan's digest
 * and a review's binding are computed over: a change to one (a key order, `null` where a field was
 * left out, a list no longer sorted) changes saved-plan digests, can make reviewed plans stale, or
 * shows or hides a diff. Any such change must be deliberate: regenerate the pins with
 * `npx vitest run test/kinds/shared/canonical-pins.test.ts -u` and say why in the commit.
 *
 * Inputs: the manifests of `examples/` and of each kind's `fixtures/`, manifests written here to
 * vary what is stated, answers written here to vary what a server may send (null, empty, absent,
 * repeated, unsorted), and what the emulator answers after each manifest is applied, each live
 * form taken without a manifest and against every manifest of its kind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../../src/api/client.js';
import type { ApiClient } from '../../../src/api/types.js';
import type { DesiredObject, LiveObject } from '../../../src/core/model.js';
import { type RunningEmulator, startEmulator } from '../../../packages/emulator/src/server.js';
import { catalogPageKind } from '../../../src/kinds/catalog-page/index.js';
import { liveCatalogPageSchema } from '../../../src/kinds/catalog-page/schema.js';
import { entityTypeKind } from '../../../src/kinds/entity-type/index.js';
import { initiativeKind } from '../../../src/kinds/initiative/index.js';
import { liveInitiativeSchema } from '../../../src/kinds/initiative/schema.js';
import { scaffolderTemplateKind } from '../../../src/kinds/scaffolder-template/index.js';
import { liveScaffolderTemplateSchema } from '../../../src/kinds/scaffolder-template/schema.js';
import { scorecardKind } from '../../../src/kinds/scorecard/index.js';
import { liveScorecardSchema } from '../../../src/kinds/scorecard/schema.js';
import type { KindHandler } from '../../../src/kinds/types.js';
import { createOf } from '../kind-change.js';
import { yamlDoc } from '../initiative/yaml-doc.js';
import { AT } from '../parse-context.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

// The kinds' manifest and live types differ; the pins only call their canonical forms.
type AnyKind = KindHandler<unknown, unknown>;

interface Pinned {
  kind: AnyKind;
  folder: string;
  /** Manifests written here (YAML), beside the repository's own. */
  manifests: readonly string[];
  /** Answers written here, as a server may send them, and how the kind keeps one as its live state. */
  answers: readonly unknown[];
  liveOf(answer: unknown): LiveObject<unknown>;
}

const manifestFilesIn = (dir: string): string[] => {
  try {
    return readdirSync(dir)
      .filter((name) => /\.(ya?ml|json)$/.test(name))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
};

const repositoryManifests = (kindName: string, folder: string): { label: string; text: string }[] =>
  [join(ROOT, 'examples', '.cortex', folder), join(ROOT, 'src', 'kinds', kindName, 'fixtures', '.cortex', folder)]
    .flatMap(manifestFilesIn)
    .map((file) => ({ label: file.slice(ROOT.length + 1), text: readFileSync(file, 'utf8') }));

const CATALOG_PAGES: Pinned = {
  kind: catalogPageKind as AnyKind,
  folder: 'catalog-pages',
  manifests: [
    'slug: minimal\nname: Minimal\niconTag: Cortex-builtin::Services\nisDraft: false\n',
    'slug: custom-icon\nname: Custom\ndescription: ""\niconTag: my-icon\nisDraft: true\ntype: FILTER\nfilter:\n  types: {exclude: [z-type, a-type, a-type]}\n  groups: {include: [b, B, a], exclude: []}\n  query: tier = 1\n',
    'slug: related\nname: Related\ndescription: The graph\niconTag: Cortex-builtin::Graph\nisDraft: false\ntype: RELATIONSHIP_TYPE\nrelationshipTypeTag: depends-on\n',
    'slug: empty-filter\nname: Empty filter\niconTag: Cortex-builtin::Services\nisDraft: false\nfilter:\n  types: {include: []}\n  groups: {}\n',
  ],
  answers: [
    { slug: 'bare' },
    {
      slug: 'nulls',
      name: null,
      description: null,
      iconTag: null,
      isDraft: null,
      type: null,
      filter: null,
      relationshipTypeTag: null,
    },
    {
      slug: 'minimal',
      name: 'Minimal',
      description: '',
      iconTag: 'Cortex-builtin::Services',
      isDraft: false,
      type: 'FILTER',
      filter: { types: { include: [], exclude: null }, groups: null, query: '' },
      dateCreated: '2026-01-01T00:00:00Z',
    },
    {
      slug: 'custom-icon',
      name: 'Custom',
      iconTag: 'Cortex-builtin::Default',
      isDraft: true,
      type: 'FILTER',
      filter: {
        types: { exclude: ['a-type', 'z-type', 'é', 'e', 'Z', '_'] },
        groups: { include: ['a', 'B', 'b', 'a'] },
        query: 'tier = 1',
        extra: 1,
      },
    },
    { slug: 'related', name: 'Related', isDraft: false, type: 'RELATIONSHIP_TYPE', relationshipTypeTag: 'depends-on' },
    { slug: 'managed', name: 'Managed', isCortexManaged: true, isDraft: true, filter: { groups: {} } },
  ],
  liveOf: (answer) => {
    const page = liveCatalogPageSchema.parse(answer);
    return { kind: 'catalog-page', id: page.slug, state: { page } };
  },
};

const INITIATIVE_BASE = 'scorecardTag: payments-readiness\ntargetDate: "2099-12-31"\nisDraft: false\n';

const INITIATIVES: Pinned = {
  kind: initiativeKind as AnyKind,
  folder: 'initiatives',
  manifests: [
    `name: Minimal\n${INITIATIVE_BASE}emphasizedLevels: [{rank: 1}]\n`,
    `name: Everything\ndescription: All of it\n${INITIATIVE_BASE}emphasizedLevels: [{rank: 3}, {rank: 1}, {rank: 3}]\nemphasizedRules: [{expression: "z != null"}, {expression: "a != null"}]\nfilter:\n  types: {include: [service, database]}\n  groups: {exclude: [b, a]}\n  query: tier = 1\nnotificationSchedule:\n  isDisabled: false\n  timeInterval: 2\n  timeUnit: WEEK\n  replyToEmails: [z@example.com, a@example.com]\n`,
    `name: Schedule only\n${INITIATIVE_BASE}emphasizedRules: [{expression: "git != null"}]\nnotificationSchedule:\n  isDisabled: true\n  timeInterval: 1\n  timeUnit: MONTH\n`,
    `name: Empty filter\ndescription: ""\n${INITIATIVE_BASE}emphasizedLevels: [{rank: 2}]\nfilter:\n  groups: {include: []}\n`,
  ],
  answers: [
    { cid: 'i1', name: 'Minimal', scorecardTag: 'payments-readiness', targetDate: '2099-12-31T00:00:00Z' },
    {
      cid: 'i2',
      name: 'Everything',
      description: null,
      scorecardTag: 'payments-readiness',
      targetDate: '2099-12-31',
      isDraft: null,
      emphasizedLevels: [
        { rank: 3, name: 'Bronze', color: '#CD7F32' },
        { rank: 1, name: 'Gold' },
        { rank: 3, name: 'Bronze again' },
      ],
      emphasizedRules: [
        { expression: 'z != null', title: 'Z' },
        { expression: 'a != null' },
        { expression: 'a != null' },
      ],
      filter: {
        types: { include: ['service', 'database', 'service'] },
        groups: { exclude: ['b', 'a'] },
        query: 'tier = 1',
      },
      notificationSchedule: {
        isDisabled: null,
        timeInterval: null,
        timeUnit: null,
        replyToEmails: ['z@example.com', 'a@example.com', 'a@example.com'],
      },
    },
    {
      cid: 'i3',
      name: 'Schedule only',
      description: '',
      scorecardTag: 'payments-readiness',
      targetDate: 'soon',
      isDraft: true,
      emphasizedLevels: null,
      emphasizedRules: [],
      filter: { types: null, groups: { include: [] }, query: '' },
      notificationSchedule: null,
    },
    {
      cid: 'i4',
      name: 'Empty filter',
      scorecardTag: 'payments-readiness',
      targetDate: '2099-12-31',
      filter: {},
      notificationSchedule: { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK' },
    },
  ],
  liveOf: (answer) => {
    const state = liveInitiativeSchema.parse(answer);
    return { kind: 'initiative', id: state.name, serverId: state.cid, state };
  },
};

const SCORECARD_LADDER =
  'ladder:\n  levels:\n    - {name: Gold, rank: 1}\n    - {name: Bronze, rank: 2}\nrules:\n  - {expression: "git != null", level: Bronze}\n';

const SCORECARDS: Pinned = {
  kind: scorecardKind as AnyKind,
  folder: 'scorecards',
  manifests: [
    `tag: minimal\nname: Minimal\n${SCORECARD_LADDER}`,
    'tag: stated\nname: Stated\ndescription: ""\ndraft: true\nnotifications: {enabled: false}\nexemptions: {enabled: true, autoApprove: false}\nevaluation: {window: 4}\nfilter:\n  kind: GENERIC\n  category: SERVICE\n  types: {exclude: [z, a, a]}\n  groups: {include: [b, a]}\n  query: tier = 1\nladder:\n  name: Medals\n  levels:\n    - {name: Silver, rank: 2, color: "#C0C0C0", description: Second}\n    - {name: Gold, rank: 1, color: ffd700}\nrules:\n  - {title: Git, expression: "git != null", weight: 3, level: Gold, filter: {kind: GENERIC, types: {include: [service]}}}\n  - {expression: "oncall != null", level: Silver, description: On call, failureMessage: Add one}\n',
  ],
  answers: [
    { tag: 'bare' },
    {
      tag: 'minimal',
      name: 'Minimal',
      description: null,
      draft: null,
      notifications: null,
      exemptions: 'not an object',
      evaluation: { window: 'soon' },
      filter: null,
      ladder: {
        name: null,
        levels: [
          { name: 'Bronze', rank: 2, color: null },
          { name: 'Gold', rank: 1 },
        ],
      },
      rules: [
        { expression: 'git != null', level: 'Bronze', title: 'Git', weight: 1, id: 'r1' },
        { expression: 'git != null', level: 'Gold' },
      ],
      dateUpdated: '2026-01-01',
    },
    {
      tag: 'stated',
      name: 'Stated',
      description: '',
      draft: false,
      notifications: { enabled: true, scoreDropNotificationsEnabled: true },
      exemptions: { enabled: true },
      evaluation: { window: 4 },
      filter: {
        kind: 'GENERIC',
        category: null,
        types: { exclude: ['a', 'z', 'a'] },
        groups: { include: [] },
        query: null,
      },
      ladder: {
        name: 'Medals',
        levels: [
          { name: 'Gold', rank: 1, color: '#FFD700' },
          { name: 'Silver', rank: 2, color: ' #c0c0c0', description: 'Second' },
          { name: 'Silver twin', rank: 2 },
        ],
      },
      rules: [
        { expression: 'oncall != null', description: 'On call', failureMessage: 'Add one', weight: null },
        {
          title: 'Git',
          expression: 'git != null',
          weight: 3,
          level: 'Gold',
          filter: { kind: 'GENERIC', types: { include: ['service'] } },
        },
      ],
    },
    { tag: 'empty', ladder: { levels: [] }, rules: [], filter: { types: {}, groups: null, query: '' } },
  ],
  liveOf: (answer) => {
    const state = liveScorecardSchema.parse(answer);
    return { kind: 'scorecard', id: state.tag, state };
  },
};

const SCAFFOLDERS: Pinned = {
  kind: scaffolderTemplateKind as AnyKind,
  folder: 'scaffolders',
  manifests: [
    'tag: minimal\nname: Minimal\ntype: COOKIECUTTER\nrepoLocator: {type: GITLAB, project: p, depth: 2, private: true}\n',
    'tag: stated\nname: Stated\ndescription: ""\ntype: COOKIECUTTER\nlabels: [z, a, a]\nrepoLocator: {type: GITHUB, org: o, repoName: r}\nrequireNewService: false\nshowReadme: true\n',
  ],
  answers: [
    { tag: 'bare' },
    { tag: 'minimal', id: 's1', name: null, type: null, labels: null, repoLocator: null, showReadme: null },
    {
      tag: 'stated',
      cid: 'c2',
      name: 'Stated',
      description: '',
      type: 'COOKIECUTTER',
      labels: ['a', 'z', 'a', 'B'],
      repoLocator: { type: 'GITHUB', repoName: 'r', org: 'o', nested: { x: 1 }, none: null },
      requireNewService: null,
      showReadme: true,
    },
  ],
  liveOf: (answer) => {
    const state = liveScaffolderTemplateSchema.parse(answer);
    return { kind: 'scaffolder-template', id: state.tag, state };
  },
};

const PINNED = [CATALOG_PAGES, INITIATIVES, SCORECARDS, SCAFFOLDERS];

const parseAll = (pinned: Pinned): { label: string; desired: DesiredObject<unknown> }[] => {
  const kindName = pinned.kind.kind;
  const texts = [
    ...repositoryManifests(kindName, pinned.folder),
    ...pinned.manifests.map((text, i) => ({ label: `written ${i}`, text })),
  ];
  return texts.flatMap(({ label, text }) => {
    const result = pinned.kind.manifest.parse(
      yamlDoc(text, `.cortex/${pinned.folder}/${label.replace(/\W+/g, '-')}.yaml`),
      AT,
    );
    const error = result.diagnostics.find((d) => d.severity === 'error');
    if (error) throw new Error(`${label}: ${error.message}`);
    return result.objects.map((desired) => ({ label, desired }));
  });
};

/** Each live form without a manifest and against every manifest of its kind: `label → canonical JSON`. */
const liveForms = (
  pinned: Pinned,
  label: string,
  live: LiveObject<unknown>,
  desired: readonly { label: string; desired: DesiredObject<unknown> }[],
): [string, string][] => [
  [`${label} (no manifest)`, JSON.stringify(pinned.kind.live.canonical(live))],
  ...desired.map((d): [string, string] => [
    `${label} (against ${d.label}: ${d.desired.id})`,
    JSON.stringify(pinned.kind.live.canonical(live, d.desired)),
  ]),
];

let emulator: RunningEmulator;
let client: ApiClient;

beforeAll(async () => {
  emulator = await startEmulator({ rateLimitPerMinute: 0, now: () => AT.now });
  client = createApiClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, sleep: async () => {} });
});
afterAll(async () => {
  await client?.close();
  await emulator?.stop();
});

/** Applies every manifest to the emulator and reads them back: the live shapes a server answers. */
const appliedAndRead = async (
  pinned: Pinned,
  desired: readonly { label: string; desired: DesiredObject<unknown> }[],
): Promise<LiveObject<unknown>[]> => {
  for (const { desired: d } of desired) {
    // A manifest the emulator refuses (one written here to vary the canonical form) is not read back.
    await pinned.kind.write.apply(createOf(d), { client, options: { sourceId: 'pins' } }).catch(() => undefined);
  }
  const all = desired.map((d) => d.desired);
  const live = await pinned.kind.live.fetch({ client, desired: all, managedIds: [], readBefore: [] });
  return live.filter((l) => all.some((d) => d.id === l.id)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
};

describe('canonical forms (what plans compare and saved-plan digests cover) are unchanged', () => {
  it('for manifests, server answers and what the emulator stores', async () => {
    // What the catalog pages' filters name, and what the Initiatives name, exist first.
    const types = parseAll({
      ...CATALOG_PAGES,
      kind: entityTypeKind as AnyKind,
      folder: 'entity-types',
      manifests: [],
    });
    for (const { desired } of types) {
      await entityTypeKind.write.apply(createOf(desired as never), { client, options: { sourceId: 'pins' } });
    }
    const pins: Record<string, Record<string, string>> = {};
    for (const pinned of [CATALOG_PAGES, SCORECARDS, INITIATIVES, SCAFFOLDERS]) {
      const out: [string, string][] = [];
      const desired = parseAll(pinned);
      for (const d of desired)
        out.push([`manifest ${d.label}: ${d.desired.id}`, JSON.stringify(pinned.kind.manifest.canonical(d.desired))]);
      pinned.answers.forEach((answer, i) =>
        out.push(...liveForms(pinned, `answer ${i}`, pinned.liveOf(answer), desired)),
      );
      for (const live of await appliedAndRead(pinned, desired)) {
        out.push(...liveForms(pinned, `emulator ${live.id}`, live, desired));
      }
      pins[pinned.kind.kind] = Object.fromEntries(out);
    }
    expect(Object.keys(pins).sort()).toEqual(PINNED.map((p) => p.kind.kind).sort());
    await expect(`${JSON.stringify(pins, null, 1)}\n`).toMatchFileSnapshot('./__pins__/canonical-forms.json');
  });
});
