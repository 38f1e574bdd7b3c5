import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { DesiredObject, LiveObject } from '../../../src/core/model.js';
import { scaffolderTemplateKind as kind } from '../../../src/kinds/scaffolder-template/index.js';
import type {
  LiveScaffolderTemplate,
  ScaffolderTemplateManifest,
} from '../../../src/kinds/scaffolder-template/schema.js';
import { liveScaffolderTemplateSchema } from '../../../src/kinds/scaffolder-template/schema.js';
import { yamlDoc } from '../initiative/yaml-doc.js';
import { AT } from '../parse-context.js';

const MANIFEST = `tag: python-service
name: Python service
description: A FastAPI service with CI
type: COOKIECUTTER
repoLocator:
  type: GITHUB
  org: acme
  repoName: python-service-template
  url: https://github.com/acme/python-service-template
requireNewService: true
createYamlFile: true
`;

const parseOne = (text: string): DesiredObject<ScaffolderTemplateManifest> => {
  const result = kind.manifest.parse(yamlDoc(text, '.cortex/scaffolders/python.yaml'), AT);
  expect(result.diagnostics).toEqual([]);
  const [obj] = result.objects;
  if (!obj) throw new Error('no object parsed');
  return obj;
};

const live = (state: unknown): LiveObject<LiveScaffolderTemplate> => {
  const parsed = liveScaffolderTemplateSchema.parse(state);
  return { kind: 'scaffolder-template', id: parsed.tag, state: parsed };
};

describe('Scaffolder template manifests', () => {
  it('owns YAML files under .cortex/scaffolders/ only', () => {
    expect(kind.layout.ownsFile('.cortex/scaffolders/python.yaml')).toBe(true);
    expect(kind.layout.ownsFile('.cortex/scaffolders/backend/go.yml')).toBe(true);
    expect(kind.layout.ownsFile('.cortex/initiatives/python.yaml')).toBe(false);
  });

  it('parses a manifest into one object identified by its tag', () => {
    const obj = parseOne(MANIFEST);
    expect(obj.id).toBe('python-service');
    expect(obj.spec.repoLocator).toMatchObject({ type: 'GITHUB', org: 'acme' });
  });

  it.each([
    ['Bad_Tag', 'Bad_Tag'],
    ['-x', '-x'],
    ['x-', 'x-'],
  ])('rejects the tag %s with an error located at the tag', (tag) => {
    const result = kind.manifest.parse(yamlDoc(MANIFEST.replace('tag: python-service', `tag: "${tag}"`)), AT);
    expect(result.objects).toEqual([]);
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        field: 'tag',
        line: 1,
        column: 1,
        kind: 'scaffolder-template',
        id: tag,
      }),
    ]);
    expect(result.diagnostics[0]?.message).toMatch(
      /lowercase letters, digits and dashes.*must not start or end with a dash/,
    );
  });

  it('accepts tags of lowercase letters, digits and inner dashes', () => {
    for (const tag of ['a', 'py3', 'python-service', 'a--b']) {
      expect(kind.manifest.parse(yamlDoc(MANIFEST.replace('python-service', tag)), AT).diagnostics).toEqual([]);
    }
  });

  it('is strict: an unknown field, an unknown provider and a missing repo are located errors', () => {
    const text = MANIFEST.replace('requireNewService: true', 'requireNewService: true\nicon: rocket').replace(
      '  org: acme\n',
      '',
    );
    const result = kind.manifest.parse(yamlDoc(text), AT);
    expect(result.diagnostics.map((d) => d.field).sort()).toEqual(['icon', 'repoLocator.org']);
    const badProvider = kind.manifest.parse(yamlDoc(MANIFEST.replace('type: GITHUB', 'type: SVN')), AT);
    expect(badProvider.diagnostics).toEqual([expect.objectContaining({ field: 'repoLocator.type', line: 6 })]);
  });

  it('takes the undocumented locator fields of other providers', () => {
    const obj = parseOne(
      MANIFEST.replace(
        /repoLocator:[\s\S]*?(?=requireNewService)/,
        'repoLocator:\n  type: GITLAB\n  namespace: acme/templates\n  project: py\n',
      ),
    );
    expect(obj.spec.repoLocator).toEqual({ type: 'GITLAB', namespace: 'acme/templates', project: 'py' });
  });

  it('references nothing and exports a JSON Schema with the tag pattern', () => {
    expect(kind.manifest.references(parseOne(MANIFEST))).toEqual([]);
    const schema = z.toJSONSchema(kind.manifest.schema, { io: 'input' }) as unknown as {
      properties: { tag: { pattern?: string } };
    };
    expect(new RegExp(schema.properties.tag.pattern ?? '^$').test('python-service')).toBe(true);
    expect(new RegExp(schema.properties.tag.pattern ?? '').test('Bad_Tag')).toBe(false);
  });
});

describe('Scaffolder template comparison', () => {
  const serverCopy = {
    id: 'sc2da8159dbeefb974',
    tag: 'python-service',
    name: 'Python service',
    description: 'A FastAPI service with CI',
    type: 'COOKIECUTTER',
    labels: [],
    repoLocator: {
      type: 'GITHUB',
      org: 'acme',
      repoName: 'python-service-template',
      url: 'https://github.com/acme/python-service-template',
    },
    requireNewService: true,
    requirePullRequest: false,
    createYamlFile: true,
    showReadme: false,
    strictAliasUsage: false,
    dateCreated: '2026-01-01T00:00:00Z',
  };

  it('a template equals its manifest whatever the server holds for the fields the manifest omits', () => {
    const manifest = parseOne(MANIFEST);
    const desired = kind.manifest.canonical(manifest);
    expect(kind.live.canonical(live(serverCopy), manifest)).toEqual(desired);
    // The server's defaults are not documented: any value of an omitted field is accepted.
    for (const filled of [
      { showReadme: true },
      { labels: ['python'] },
      { requirePullRequest: null },
      { strictAliasUsage: true, labels: null },
    ])
      expect(kind.live.canonical(live({ ...serverCopy, ...filled }), manifest)).toEqual(desired);
  });

  it('a field the manifest states is compared', () => {
    const manifest = parseOne(MANIFEST);
    const desired = kind.manifest.canonical(manifest);
    const liveState = (state: typeof serverCopy) => kind.live.canonical(live(state), manifest);
    expect(liveState({ ...serverCopy, requireNewService: false })).not.toEqual(desired);
    expect(liveState({ ...serverCopy, description: 'another' })).not.toEqual(desired);
    expect(liveState({ ...serverCopy, repoLocator: { ...serverCopy.repoLocator, org: 'other' } })).not.toEqual(desired);
    const labelled = parseOne(`${MANIFEST}labels: [python, backend]\n`);
    expect(kind.live.canonical(live({ ...serverCopy, labels: ['backend', 'python'] }), labelled)).toEqual(
      kind.manifest.canonical(labelled),
    );
    expect(kind.live.canonical(live(serverCopy), labelled)).not.toEqual(kind.manifest.canonical(labelled));
  });
});
