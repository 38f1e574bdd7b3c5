import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { DesiredObject, LiveObject } from '../../../src/core/model.js';
import { initiativeKind as kind } from '../../../src/kinds/initiative/index.js';
import type { InitiativeManifest, LiveInitiative } from '../../../src/kinds/initiative/schema.js';
import { liveInitiativeSchema } from '../../../src/kinds/initiative/schema.js';
import { buildPlan } from '../../../src/core/plan.js';
import { fakeHandler } from '../../core/fakes.js';
import { yamlDoc } from './yaml-doc.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const AT_NOW = { now: NOW };

const MANIFEST = `name: Prod readiness Q3
description: Get every service to Silver
scorecardTag: production-readiness
targetDate: "2026-12-31"
isDraft: false
emphasizedLevels:
  - rank: 2
  - rank: 1
emphasizedRules:
  - expression: git != null
filter:
  types:
    include: [service, database]
  groups:
    exclude: [deprecated]
notificationSchedule:
  isDisabled: false
  timeInterval: 1
  timeUnit: WEEK
  replyToEmails: [b@example.com, a@example.com]
`;

const parseOne = (text: string): DesiredObject<InitiativeManifest> => {
  const result = kind.manifest.parse(yamlDoc(text, '.cortex/initiatives/q3.yaml'), AT_NOW);
  expect(result.diagnostics).toEqual([]);
  const [obj] = result.objects;
  if (!obj) throw new Error('no object parsed');
  return obj;
};

const live = (state: unknown): LiveObject<LiveInitiative> => {
  const parsed = liveInitiativeSchema.parse(state);
  return { kind: 'initiative', id: parsed.name, serverId: parsed.cid, state: parsed };
};

describe('initiative manifests', () => {
  it('owns YAML files under .cortex/initiatives/ only', () => {
    expect(kind.layout.ownsFile('.cortex/initiatives/q3.yaml')).toBe(true);
    expect(kind.layout.ownsFile('.cortex/initiatives/team/a/q4.yml')).toBe(true);
    expect(kind.layout.ownsFile('.cortex/initiatives/README.md')).toBe(false);
    expect(kind.layout.ownsFile('.cortex/scaffolders/q3.yaml')).toBe(false);
  });

  it('parses a manifest into one object identified by its name', () => {
    const obj = parseOne(MANIFEST);
    expect(obj.id).toBe('Prod readiness Q3');
    expect(obj.source).toEqual({ file: '.cortex/initiatives/q3.yaml', line: 1, column: 1 });
    expect(obj.spec.scorecardTag).toBe('production-readiness');
  });

  it('defaults the unused emphasized list to []', () => {
    const obj = parseOne(
      'name: A\nscorecardTag: s\ntargetDate: "2027-01-01"\nisDraft: true\nemphasizedLevels: [{rank: 1}]\n',
    );
    expect(obj.spec.emphasizedRules).toEqual([]);
  });

  it('rejects a cid with a located message explaining the identity is the name', () => {
    const text =
      'name: A\ncid: in2da8159dbeefb974\nscorecardTag: s\ntargetDate: "2027-01-01"\nisDraft: false\nemphasizedLevels: [{rank: 1}]\n';
    const result = kind.manifest.parse(yamlDoc(text), AT_NOW);
    expect(result.objects).toEqual([]);
    const cid = result.diagnostics.find((d) => d.field === 'cid');
    expect(cid).toMatchObject({ severity: 'error', line: 2, kind: 'initiative', id: 'A' });
    expect(cid?.message).toMatch(/cid: is assigned by Cortex.*identified by its name/);
  });

  it('collects every problem: bad date, unknown key, no emphasis, include and exclude together', () => {
    const text = [
      'name: A',
      'scorecardTag: s',
      'targetDate: 2026-02-30',
      'isDraft: false',
      'color: red',
      'filter:',
      '  types: {include: [service], exclude: [team]}',
    ].join('\n');
    const result = kind.manifest.parse(yamlDoc(text), AT_NOW);
    expect(result.objects).toEqual([]);
    const lines = result.diagnostics.map((d) => d.line).sort();
    expect(result.diagnostics.every((d) => d.severity === 'error')).toBe(true);
    expect(result.diagnostics.find((d) => d.field === 'targetDate')?.line).toBe(3);
    expect(lines).toContain(5); // color
    expect(lines).toContain(7); // filter.types
    expect(
      result.diagnostics.some((d) => /^emphasizedLevels: is empty and so is emphasizedRules/.test(d.message)),
    ).toBe(true);
  });

  it('warns of a targetDate that is not in the future, at its line, judged by the clock it is given (only a plan that writes it fails)', () => {
    const text =
      'name: Old\nscorecardTag: s\ntargetDate: "2026-03-01"\nisDraft: false\nemphasizedLevels: [{rank: 1}]\n';
    const past = kind.manifest.parse(yamlDoc(text), AT_NOW);
    expect(past.objects).toHaveLength(1);
    expect(past.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'initiative-target-date-past',
        line: 3,
        field: 'targetDate',
        message: expect.stringContaining('today is 2026-03-01 UTC'),
      }),
    ]);
    const earlier = kind.manifest.parse(yamlDoc(text), { now: Date.parse('2025-01-01T00:00:00Z') });
    expect(earlier.diagnostics).toEqual([]);
    expect(earlier.objects).toHaveLength(1);
  });

  it('references the scorecard and custom filter types (both ordering), not built-in types', () => {
    const refs = kind.manifest.references(parseOne(MANIFEST));
    expect(refs).toEqual([
      { kind: 'scorecard', id: 'production-readiness', field: 'scorecardTag', path: ['scorecardTag'], ordering: true },
      {
        kind: 'entity-type',
        id: 'database',
        field: 'filter.types.include[1]',
        path: ['filter', 'types', 'include', 1],
        ordering: true,
      },
    ]);
  });

  it('is written after the scorecard it names when the plan writes both', () => {
    const initiative = parseOne(MANIFEST);
    const scorecard: DesiredObject = {
      kind: 'scorecard',
      id: 'production-readiness',
      source: { file: '.cortex/scorecards/p.yaml', line: 1, column: 1 },
      spec: { state: { levels: 3 } },
      doc: yamlDoc('tag: production-readiness\n'),
    };
    const plan = buildPlan({
      desired: [initiative, scorecard],
      live: [],
      handlers: [fakeHandler('scorecard'), kind],
      options: {
        sourceId: 'repo',
        prune: false,
        allowTakeover: false,
        allowMassDelete: false,
        protect: [],
        manifestsComplete: true,
      },
    });
    const create = plan.changes.find((c) => c.kind === 'initiative');
    expect(create?.action).toBe('create');
    expect(create?.waitsFor).toEqual(['scorecard/production-readiness']);
  });

  it('exports its manifest schema as JSON Schema for editors', () => {
    const schema = z.toJSONSchema(kind.manifest.schema, { io: 'input' }) as { required?: string[] };
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'scorecardTag', 'targetDate', 'isDraft']));
  });
});

describe('initiative comparison', () => {
  const enriched = {
    cid: 'in2da8159dbeefb974',
    name: 'Prod readiness Q3',
    description: 'Get every service to Silver',
    scorecardTag: 'production-readiness',
    scorecardName: 'Production Readiness',
    targetDate: '2026-12-31',
    isDraft: false,
    emphasizedLevels: [
      { rank: 1, name: 'Gold', color: '#FFD700' },
      { rank: 2, name: 'Silver', color: '#C0C0C0' },
    ],
    emphasizedRules: [{ expression: 'git != null', title: 'Has a git repository', description: 'x' }],
    filter: { types: { include: ['database', 'service'] }, groups: { exclude: ['deprecated'] } },
    notificationSchedule: {
      isDisabled: false,
      timeInterval: 1,
      timeUnit: 'WEEK',
      replyToEmails: ['a@example.com', 'b@example.com'],
    },
    dateCreated: '2026-01-01T00:00:00Z',
    dateUpdated: '2026-02-01T00:00:00Z',
  };

  it('an enriched live Initiative equals its manifest', () => {
    const desired = parseOne(MANIFEST);
    expect(kind.live.canonical(live(enriched), desired)).toEqual(kind.manifest.canonical(desired));
  });

  it('a description set live but omitted in the manifest is a difference (PUT would clear it)', () => {
    const manifest = parseOne(MANIFEST.replace(/^description:.*\n/m, ''));
    const desired = kind.manifest.canonical(manifest);
    expect(desired).toMatchObject({ description: null });
    expect(kind.live.canonical(live(enriched), manifest)).not.toEqual(desired);
    expect(kind.live.canonical(live({ ...enriched, description: null }), manifest)).toEqual(desired);
    expect(kind.live.canonical(live({ ...enriched, description: '' }), manifest)).toEqual(desired);
  });

  it("an omitted filter equals an empty or null live filter; an omitted schedule is the server's to fill", () => {
    const bare = parseOne(
      'name: B\nscorecardTag: s\ntargetDate: "2027-01-01"\nisDraft: false\nemphasizedLevels: [{rank: 1}]\n',
    );
    const base = { cid: 'in1', name: 'B', scorecardTag: 's', targetDate: '2027-01-01', isDraft: false };
    const levels = { emphasizedLevels: [{ rank: 1, name: 'Gold', color: '#FFD700' }], emphasizedRules: [] };
    const same = (state: Parameters<typeof live>[0]) => kind.live.canonical(live(state), bare);
    expect(same({ ...base, ...levels, filter: { types: null, groups: { include: [] } } })).toEqual(
      kind.manifest.canonical(bare),
    );
    expect(same({ ...base, ...levels, filter: null })).toEqual(kind.manifest.canonical(bare));
    // Whatever default schedule Cortex gives an Initiative whose manifest states none, it is no difference.
    for (const notificationSchedule of [
      { isDisabled: true, timeInterval: 1, timeUnit: 'DAY' },
      { isDisabled: false, timeInterval: 2, timeUnit: 'WEEK', replyToEmails: ['x@example.com'] },
    ])
      expect(same({ ...base, ...levels, notificationSchedule })).toEqual(kind.manifest.canonical(bare));
  });

  it('a stated schedule is compared; reply-to emails only when the manifest lists them', () => {
    const stated = parseOne(MANIFEST);
    const withoutEmails = parseOne(MANIFEST.replace(/^ {2}replyToEmails:.*\n/m, ''));
    const schedule = { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK' };
    expect(
      kind.live.canonical(live({ ...enriched, notificationSchedule: { ...schedule, timeUnit: 'DAY' } }), stated),
    ).not.toEqual(kind.manifest.canonical(stated));
    expect(
      kind.live.canonical(
        live({ ...enriched, notificationSchedule: { ...schedule, replyToEmails: ['z@example.com'] } }),
        withoutEmails,
      ),
    ).toEqual(kind.manifest.canonical(withoutEmails));
    expect(
      kind.live.canonical(
        live({ ...enriched, notificationSchedule: { ...schedule, replyToEmails: ['z@example.com'] } }),
        stated,
      ),
    ).not.toEqual(kind.manifest.canonical(stated));
  });

  it('a changed rank, rule or target date is a difference', () => {
    const manifest = parseOne(MANIFEST);
    const desired = kind.manifest.canonical(manifest);
    const liveState = (state: Parameters<typeof live>[0]) => kind.live.canonical(live(state), manifest);
    expect(liveState({ ...enriched, emphasizedLevels: [{ rank: 3, name: 'Bronze', color: '' }] })).not.toEqual(desired);
    expect(liveState({ ...enriched, emphasizedRules: [{ expression: 'git == null' }] })).not.toEqual(desired);
    expect(liveState({ ...enriched, targetDate: '2027-01-01' })).not.toEqual(desired);
  });
});
