/**
 * Each kind's `toManifestFiles`: the files it writes parse back, under the kind's own schema, into
 * objects whose comparable form equals the live one (so a plan on them has nothing to change), and
 * what the server owns is not written; no value is dropped for equalling a guessed server default.
 */
import { describe, expect, it } from 'vitest';
import type { DesiredObject, JsonValue, LiveObject, ParsedDocument } from '../../src/core/model.js';
import { manifestBaseName } from '../../src/kinds/shared/file-name.js';
import { manifestText } from '../../src/export/render.js';
import { toManifestFiles as catalogPageFiles } from '../../src/kinds/catalog-page/to-manifest.js';
import { toManifestFiles as dependencyFiles } from '../../src/kinds/dependency/to-manifest.js';
import { toManifestFiles as entityFiles } from '../../src/kinds/entity/to-manifest.js';
import { toManifestFiles as entityTypeFiles } from '../../src/kinds/entity-type/to-manifest.js';
import { toManifestFiles as initiativeFiles } from '../../src/kinds/initiative/to-manifest.js';
import { handlerFor } from '../../src/kinds/registry.js';
import { toManifestFiles as scaffolderFiles } from '../../src/kinds/scaffolder-template/to-manifest.js';
import type { ManifestFile } from '../../src/kinds/types.js';
import { parseManifestFile } from '../../src/source/yaml.js';

type Kind = Parameters<typeof handlerFor>[0];

/** The kind's pure half as this test uses it (the parse clock and the compared manifest are optional inputs). */
interface PureKind {
  layout: { ownsFile(relPath: string): boolean };
  manifest: {
    parse(doc: ParsedDocument, ctx: { now: number }): { objects: DesiredObject[]; diagnostics: { severity: string }[] };
    canonical(obj: DesiredObject): JsonValue;
  };
  live: { canonical(obj: LiveObject, desired?: DesiredObject): JsonValue };
}
const pureKind = (kind: Kind): PureKind => handlerFor(kind);

/** Writes the files as text, parses them back with the kind, and returns desired states by id and the texts. */
const roundTrip = (kind: Kind, files: ManifestFile[]) => {
  const handler = pureKind(kind);
  const desired = new Map<string, DesiredObject>();
  const texts: string[] = [];
  for (const file of files) {
    expect(handler.layout.ownsFile(file.path), file.path).toBe(true);
    const text = manifestText(kind, file.document);
    texts.push(text);
    const parsed = parseManifestFile(file.path, text);
    expect(parsed.diagnostics).toEqual([]);
    for (const doc of parsed.documents) {
      const result = handler.manifest.parse(doc, { now: Date.parse('2026-01-01T00:00:00Z') });
      expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      for (const obj of result.objects) desired.set(obj.id, obj);
    }
    expect([...desired.keys()]).toEqual(expect.arrayContaining(file.ids));
  }
  return { desired, texts };
};

const expectInSync = (kind: Kind, live: LiveObject[], files: ManifestFile[]) => {
  const { desired, texts } = roundTrip(kind, files);
  const handler = pureKind(kind);
  for (const obj of live) {
    const manifest = desired.get(obj.id);
    expect(manifest, `${kind} ${obj.id}`).toBeDefined();
    if (!manifest) continue;
    expect(handler.manifest.canonical(manifest), `${kind} ${obj.id}`).toEqual(handler.live.canonical(obj, manifest));
  }
  return texts;
};

describe('entity', () => {
  const live: LiveObject[] = [
    {
      kind: 'entity',
      id: '@acme/web.app',
      serverId: 'en123',
      owner: 'someone',
      state: {
        descriptor: {
          info: {
            'x-cortex-groups': ['b', 'a'],
            description: 'Web',
            'x-cortex-custom-metadata': { 'cortex-sync': { source: 'someone' }, tier: 1 },
            'x-cortex-type': 'service',
            'x-cortex-tag': '@acme/web.app',
            title: 'Web app',
            'x-cortex-service-groups': 'legacy',
            'x-cortex-unknown-thing': 1,
            'x-cortex-link': [],
          },
          openapi: '3.0.1',
        },
      },
    },
    {
      kind: 'entity',
      id: 'platform',
      state: { descriptor: { info: { title: 'Platform', 'x-cortex-tag': 'platform', 'x-cortex-type': 'team' } } },
    },
    {
      kind: 'entity',
      id: 'payments',
      state: {
        descriptor: {
          openapi: '3.0.1',
          info: { title: 'Payments', 'x-cortex-tag': 'payments', 'x-cortex-type': 'domain' },
        },
      },
    },
    {
      kind: 'entity',
      id: 'old',
      archived: true,
      state: { descriptor: null, summary: { tag: 'old', name: 'Old one', type: 'service' } },
    },
  ];
  const files = entityFiles(live as LiveObject<never>[]);

  it('places teams, domains and other entities in their folders, one file per tag', () => {
    expect(files.map((f) => f.path)).toEqual([
      `.cortex/catalog/${manifestBaseName('@acme/web.app')}.yaml`,
      '.cortex/teams/platform.yaml',
      '.cortex/domains/payments.yaml',
      '.cortex/catalog/old.yaml',
    ]);
  });

  it('parses back to the live canonical form, without the marker, unknown keys or empty values', () => {
    const [web] = expectInSync('entity', live, files);
    expect(web).not.toContain('cortex-sync:');
    expect(web).not.toContain('x-cortex-unknown-thing');
    expect(web).not.toContain('x-cortex-link');
    expect(web).not.toContain('x-cortex-service-groups');
  });

  it('writes openapi, then info with title, tag and type first', () => {
    const text = manifestText('entity', files[0]?.document ?? null);
    expect(text.split('\n').slice(0, 6)).toEqual([
      '# yaml-language-server: $schema=entity.schema.json',
      'openapi: 3.0.1',
      'info:',
      '  title: Web app',
      '  x-cortex-tag: "@acme/web.app"',
      '  x-cortex-type: service',
    ]);
  });
});

describe('file names', () => {
  it('are the identity when it is a plain name, and otherwise safe, distinct and case-proof', () => {
    expect(manifestBaseName('payments-api')).toBe('payments-api');
    const awkward = ['@acme/web.app', 'acme/web.app', 'Acme-Web.App', 'acme-web.app', 'CON', 'a b', '../x', ''];
    const names = awkward.map(manifestBaseName);
    for (const name of names) expect(name).toMatch(/^[a-z0-9][a-z0-9._~-]*$/);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(awkward.length);
  });
});

describe('entity-type', () => {
  it('exports custom types only, each with the icon the server answers, whichever it is', () => {
    const live: LiveObject[] = [
      {
        kind: 'entity-type',
        id: 'ai-agent',
        state: {
          definition: {
            type: 'ai-agent',
            name: 'AI Agent',
            description: '',
            iconTag: 'Cortex-builtin::Box',
            source: 'CUSTOM',
            schema: { type: 'object', required: ['model'], properties: { model: { type: 'string' } } },
          },
        },
      },
      {
        kind: 'entity-type',
        id: 's3',
        protected: true,
        state: { definition: { type: 's3', name: 'S3', source: 'CORTEX', schema: {} } },
      },
    ];
    // A server whose default icon is another one: the type it gave that icon exports it too.
    live.push({
      kind: 'entity-type',
      id: 'stream',
      state: { definition: { type: 'stream', name: 'Stream', iconTag: 'Cortex-builtin::Hexagon', source: 'CUSTOM' } },
    });
    const files = entityTypeFiles(live as LiveObject<never>[]);
    expect(files.map((f) => f.ids)).toEqual([['ai-agent'], ['stream']]);
    expect(files[0]?.document).toEqual({
      type: 'ai-agent',
      name: 'AI Agent',
      iconTag: 'Cortex-builtin::Box',
      schema: { type: 'object', required: ['model'], properties: { model: { type: 'string' } } },
    });
    expect(files[1]?.document).toEqual({
      type: 'stream',
      name: 'Stream',
      iconTag: 'Cortex-builtin::Hexagon',
      schema: {},
    });
    expectInSync('entity-type', [live[0]!, live[2]!], files);
  });
});

describe('dependency', () => {
  it('writes one file per caller, edges sorted, empty description and metadata left out', () => {
    const edge = (callee: string, extra: Record<string, unknown> = {}): LiveObject => ({
      kind: 'dependency',
      id: `a→${callee}`,
      state: { callerTag: 'a', calleeTag: callee, method: null, path: null, description: '', metadata: {}, ...extra },
    });
    const live = [
      edge('c', { method: 'post', path: '/v1/x', description: 'writes', metadata: { k: 1 } }),
      edge('b'),
      { ...edge('z'), state: { callerTag: '@scope/caller', calleeTag: 'z' } },
    ];
    live[0]!.id = 'a→c POST /v1/x';
    live[2]!.id = '@scope/caller→z';
    const files = dependencyFiles(live as LiveObject<never>[]);
    expect(files.map((f) => f.document)).toEqual([
      { callerTag: '@scope/caller', dependencies: [{ tag: 'z' }] },
      {
        callerTag: 'a',
        dependencies: [
          { tag: 'b' },
          { tag: 'c', method: 'POST', path: '/v1/x', description: 'writes', metadata: { k: 1 } },
        ],
      },
    ]);
    expectInSync('dependency', live, files);
  });
});

describe('catalog-page', () => {
  it('leaves out a type the server inferred and keeps one it could not infer', () => {
    const live: LiveObject[] = [
      {
        kind: 'catalog-page',
        id: 'pipelines',
        state: {
          page: {
            slug: 'pipelines',
            name: 'Pipelines',
            description: null,
            iconTag: 'Cortex-builtin::Pipeline',
            isDraft: false,
            type: 'FILTER',
            filter: { types: { include: ['pipeline'], exclude: [] }, groups: null, query: null },
            relationshipTypeTag: null,
            dateCreated: '2026-01-01T00:00:00Z',
          },
          comparedIconTag: 'Cortex-builtin::Pipeline',
        },
      },
      {
        kind: 'catalog-page',
        id: 'domains',
        state: {
          page: { slug: 'domains', name: 'Domains', iconTag: 'Cortex-builtin::Box', isDraft: true, type: 'DOMAIN' },
          comparedIconTag: 'Cortex-builtin::Box',
        },
      },
    ];
    const files = catalogPageFiles(live as LiveObject<never>[]);
    expect(files[0]?.document).toEqual({
      slug: 'pipelines',
      name: 'Pipelines',
      iconTag: 'Cortex-builtin::Pipeline',
      isDraft: false,
      filter: { types: { include: ['pipeline'] } },
    });
    expect(files[1]?.document).toMatchObject({ type: 'DOMAIN', isDraft: true });
    expectInSync('catalog-page', live, files);
  });
});

describe('initiative', () => {
  it('writes a draft without cid, enrichment or dates, target date as a day', () => {
    const live: LiveObject[] = [
      {
        kind: 'initiative',
        id: 'Q3 readiness',
        serverId: 'in123',
        state: {
          cid: 'in123',
          name: 'Q3 readiness',
          description: null,
          scorecardTag: 'prod',
          scorecardName: 'Production',
          targetDate: '2030-09-30T00:00:00Z',
          isDraft: true,
          emphasizedLevels: [{ rank: 2, name: 'Silver', color: '#ccc' }],
          emphasizedRules: [],
          filter: { types: null, groups: { include: ['tier-1'], exclude: [] }, query: null },
          notificationSchedule: { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK', replyToEmails: [] },
          dateCreated: '2026-01-01',
        },
      },
    ];
    const files = initiativeFiles(live as LiveObject<never>[]);
    expect(files[0]?.path).toBe(`.cortex/initiatives/${manifestBaseName('Q3 readiness')}.yaml`);
    expect(files[0]?.document).toEqual({
      name: 'Q3 readiness',
      scorecardTag: 'prod',
      targetDate: '2030-09-30',
      isDraft: true,
      emphasizedLevels: [{ rank: 2 }],
      filter: { groups: { include: ['tier-1'] } },
      notificationSchedule: { isDisabled: false, timeInterval: 1, timeUnit: 'WEEK' },
    });
    const [text] = expectInSync('initiative', live, files);
    expect(text).toContain('targetDate: "2030-09-30"');
  });
});

describe('scaffolder-template', () => {
  it('leaves out server ids, an empty description and empty labels; writes every flag, false too', () => {
    const live: LiveObject[] = [
      {
        kind: 'scaffolder-template',
        id: 'go-service',
        serverId: 'sc1',
        state: {
          tag: 'go-service',
          id: 'sc1',
          name: 'Go service',
          description: null,
          type: 'COOKIECUTTER',
          labels: [],
          repoLocator: { type: 'GITHUB', org: 'acme', repoName: 'go-template', url: null },
          requireNewService: true,
          requirePullRequest: false,
          createYamlFile: false,
          showReadme: false,
          strictAliasUsage: false,
        },
      },
    ];
    const files = scaffolderFiles(live as LiveObject<never>[]);
    expect(files[0]?.document).toEqual({
      tag: 'go-service',
      name: 'Go service',
      type: 'COOKIECUTTER',
      repoLocator: { type: 'GITHUB', org: 'acme', repoName: 'go-template' },
      requireNewService: true,
      requirePullRequest: false,
      createYamlFile: false,
      showReadme: false,
      strictAliasUsage: false,
    });
    expectInSync('scaffolder-template', live, files);
  });
});
