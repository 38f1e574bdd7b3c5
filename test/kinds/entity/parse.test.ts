import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { DesiredObject } from '../../../src/core/model.js';
import { ownsEntityFile } from '../../../src/kinds/entity/files.js';
import { entityReferences, parseEntityDocument } from '../../../src/kinds/entity/parse.js';
import { type EntityDescriptor, entityDescriptorSchema } from '../../../src/kinds/entity/schema.js';
import { parseManifestFile } from '../../../src/source/yaml.js';

const parse = (...infoLines: string[]) => {
  const text = ['openapi: 3.0.1', 'info:', '  title: Payments', ...infoLines, ''].join('\n');
  const [doc] = parseManifestFile('cortex.yaml', text).documents;
  if (!doc) throw new Error('no document');
  return parseEntityDocument(doc);
};
const only = (result: ReturnType<typeof parse>): DesiredObject<EntityDescriptor> => {
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const [object] = result.objects;
  if (!object) throw new Error('no object');
  return object;
};

describe('ownsEntityFile', () => {
  it.each([
    ['cortex.yaml', true],
    ['services/a/cortex.yml', true],
    ['.cortex/catalog/payments.yaml', true],
    ['.cortex/domains/deep/er/billing.yml', true],
    ['.cortex/teams/eng.yaml', true],
    ['.cortex/catalog/readme.md', false],
    ['.cortex/entity-types/db.yaml', false],
    ['.cortex/scorecards/x.yaml', false],
    ['.cortex/catalog2/ser1.yaml', false],
    ['sub/.cortex/catalog/x.yaml', false],
    ['other.yaml', false],
    ['cortex.yaml.bak', false],
    ['node_modules/pkg/cortex.yaml', false],
  ])('%s → %s', (file, owned) => {
    expect(ownsEntityFile(file)).toBe(owned);
  });
});

describe('parseEntityDocument', () => {
  it('takes the id from x-cortex-tag, locates the object at the tag and defaults the type to service', () => {
    const object = only(parse('  x-cortex-tag: payments-api'));
    expect(object).toMatchObject({
      kind: 'entity',
      id: 'payments-api',
      source: { file: 'cortex.yaml', line: 4, column: 3 },
    });
    expect(object.spec.info['x-cortex-type']).toBe('service');
  });

  it('accepts the shapes of the known keys, keeping other info and top-level keys', () => {
    const object = only(
      parse(
        '  description: Handles payments',
        '  version: 1.2.0',
        '  x-cortex-tag: payments-api',
        '  x-cortex-owners:',
        '    - {type: GROUP, name: platform, provider: CORTEX, inheritance: APPEND}',
        '    - {type: email, email: jane@example.com, description: ""}',
        '    - {type: slack, channel: team-payments, notificationsEnabled: true}',
        '  x-cortex-groups: [tier-0, "lang:go"]',
        '  x-cortex-link: [{name: Runbook, type: RUNBOOK, url: "https://wiki/x"}]',
        '  x-cortex-custom-metadata: {tier: 0, nested: {a: [1, null]}, ts: 2024-01-25T14:45:14.646626276}',
        '  x-cortex-dependency: [{tag: ledger, method: post, path: /v1/entries, metadata: {prod: true}}, {tag: audit}]',
        '  x-cortex-git: {github: {repository: my-org/payments, basepath: svc}}',
        '  x-cortex-oncall: {pagerduty: {id: 12435, type: SERVICE}}',
        '  x-cortex-slack: {channels: [{name: payments}]}',
        '  x-cortex-apm: {newrelic: {applicationId: 1}}',
        '  x-cortex-link-extra-not-cortex: 1',
        'paths: {}',
        'servers: [{url: /}]',
      ),
    );
    expect(object.spec.info['x-cortex-custom-metadata']).toEqual({
      tier: 0,
      nested: { a: [1, null] },
      ts: '2024-01-25T14:45:14.646626276',
    });
    expect(object.spec.info.version).toBe('1.2.0');
    expect((object.spec as Record<string, unknown>).servers).toEqual([{ url: '/' }]);
  });

  it('explains owner mistakes field by field', () => {
    const result = parse(
      '  x-cortex-tag: svc',
      '  x-cortex-owners:',
      '    - type: team',
      '      name: x',
      '    - type: email',
      '      email: jane@example.com',
      '      name: jane',
      '    - type: slack',
      '    - type: group',
      '      name: platform',
      '      provider: cortex',
    );
    expect(result.objects).toEqual([]);
    expect(result.diagnostics.map((d) => [d.line, d.message])).toEqual([
      [6, "info.x-cortex-owners[0].type: expected one of group, email, slack, got 'team'"],
      [10, 'info.x-cortex-owners[1].name: `name` is not a field of email owners (they use `email`)'],
      [11, 'info.x-cortex-owners[2]: an owner of type slack needs `channel`'],
      [
        14,
        expect.stringMatching(
          /^info\.x-cortex-owners\[3\]\.provider: expected one of ACTIVE_DIRECTORY, .*CORTEX.*, got 'cortex'$/,
        ),
      ],
    ]);
  });

  it('accepts the owner shapes real workspaces use and the API takes, with a located warning each', () => {
    const result = parse(
      '  x-cortex-tag: svc',
      '  x-cortex-owners:',
      '    - type: EMAIL',
      '      name: matthew@example.com',
      '    - type: SLACK',
      '      name: wg-payments',
      '    - type: EMAIL',
      '      email: null',
      '      inheritance: APPEND',
      '  x-cortex-service-groups: tier-4',
    );
    expect(result.objects).toHaveLength(1);
    expect(result.objects[0]?.spec.info['x-cortex-service-groups']).toEqual(['tier-4']);
    expect(result.diagnostics.map((d) => [d.severity, d.line, d.field])).toEqual([
      ['warning', 7, 'info.x-cortex-owners[0].name'],
      ['warning', 9, 'info.x-cortex-owners[1].name'],
      ['warning', 11, 'info.x-cortex-owners[2].email'],
      ['warning', 13, 'info.x-cortex-service-groups'],
      ['warning', 13, 'info.x-cortex-service-groups'],
    ]);
    expect(result.diagnostics[0]?.message).toContain('email owners use `email: matthew@example.com`');
    expect(result.diagnostics[1]?.message).toContain('slack owners use `channel: wg-payments`');
    expect(result.diagnostics.map((d) => d.message)).toContain(
      'info.x-cortex-service-groups: a single group written as a string; it is sent as the list [tier-4]',
    );
  });

  it('requires method and path of a dependency together', () => {
    const result = parse('  x-cortex-tag: svc', '  x-cortex-dependency:', '    - tag: ledger', '      method: GET');
    expect(result.diagnostics).toMatchObject([
      {
        severity: 'error',
        field: 'info.x-cortex-dependency[0]',
        line: 6,
        message: expect.stringContaining('`path` is missing'),
      },
    ]);
  });

  it('rejects empty and templated tags but accepts the tag styles production repositories use', () => {
    for (const tag of [
      '"@jupiterone/graph-azure"',
      '84NGF5cvECFprd8t4PAn72',
      'auto_docker_netshoot',
      'payments-1.7.1',
    ]) {
      expect(parse(`  x-cortex-tag: ${tag}`).objects).toHaveLength(1);
    }
    for (const tag of [
      '""',
      '"{{ cookiecutter.slug }}"',
      // a literal, unrendered template placeholder
      '${env}-svc',
      '$SERVICE_NAME',
      '<SERVICE_TAG>',
      '" padded"',
    ]) {
      const result = parse(`  x-cortex-tag: ${tag}`);
      expect(result.objects).toEqual([]);
      expect(result.diagnostics, tag).toMatchObject([{ severity: 'error', field: 'info.x-cortex-tag', line: 4 }]);
    }
  });

  it('warns, with the line, about unknown x-cortex keys, legacy names and x-cortex keys outside info', () => {
    const text = [
      'openapi: 3.0',
      'x-cortex-groups: [a]',
      'info:',
      '  title: T',
      '  x-cortex-tag: svc',
      '  x-cortex-domain-parents: [{tag: d}]',
      '  x-cortex-service-groups: [tier-1]',
      '  x-cortex-descripton: typo',
      '',
    ].join('\n');
    const [doc] = parseManifestFile('cortex.yaml', text).documents;
    const result = parseEntityDocument(doc as NonNullable<typeof doc>);
    expect(result.objects).toHaveLength(1);
    expect(result.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([
      ['warning', 'openapi-version', 1],
      ['warning', 'misplaced-key', 2],
      ['warning', 'deprecated-key', 6],
      ['warning', 'deprecated-key', 7],
      ['warning', 'unknown-key', 8],
    ]);
    expect(result.diagnostics[2]?.message).toContain('x-cortex-parents');
    expect(result.diagnostics[3]?.message).toContain('x-cortex-groups');
  });

  it('warns when a custom-type entity has no x-cortex-definition', () => {
    const result = parse('  x-cortex-tag: bucket', '  x-cortex-type: s3');
    expect(result.objects).toHaveLength(1);
    expect(result.diagnostics).toMatchObject([{ severity: 'warning', code: 'missing-definition', line: 5 }]);
    expect(parse('  x-cortex-tag: b', '  x-cortex-type: s3', '  x-cortex-definition: {}').diagnostics).toEqual([]);
  });

  it('reports all problems of a document together with its warnings', () => {
    const result = parse('  x-cortex-tag: ""', '  x-cortex-links: []', '  x-cortex-groups: tier-1');
    expect(result.diagnostics.map((d) => [d.severity, d.line])).toEqual([
      ['error', 4],
      ['warning', 5],
      ['error', 6],
    ]);
  });
});

describe('entityReferences', () => {
  it('lists the type, Cortex team owners, parents, children, dependencies and relationships with their paths', () => {
    const object = only(
      parse(
        '  x-cortex-tag: payments',
        '  x-cortex-type: ai-agent',
        '  x-cortex-definition: {}',
        '  x-cortex-owners:',
        '    - {type: group, name: platform, provider: CORTEX}',
        '    - {type: group, name: okta-group, provider: OKTA}',
        '    - {type: group, name: legacy-group}',
        '    - {type: email, email: a@b.c}',
        '  x-cortex-parents: [{tag: payments-domain}]',
        '  x-cortex-domain-parents: [{tag: old-domain}]',
        '  x-cortex-children: [{tag: payments-worker}]',
        '  x-cortex-dependency: [{tag: ledger}]',
        '  x-cortex-relationships:',
        '    - {type: runs-in, destinations: [{tag: aws-prod}], sources: [{tag: deployer}]}',
        '    - {type: environments, tag: release-1}',
      ),
    );
    const refs = entityReferences(object);
    expect(refs.map((r) => [r.kind, r.id, r.field, r.ordering, r.type])).toEqual([
      ['entity-type', 'ai-agent', 'info.x-cortex-type', true, undefined],
      ['entity', 'platform', 'info.x-cortex-owners[0].name', true, 'team'],
      ['entity', 'payments-domain', 'info.x-cortex-parents[0].tag', true, undefined],
      ['entity', 'old-domain', 'info.x-cortex-domain-parents[0].tag', true, undefined],
      ['entity', 'payments-worker', 'info.x-cortex-children[0].tag', false, undefined],
      ['entity', 'ledger', 'info.x-cortex-dependency[0].tag', false, undefined],
      ['entity', 'aws-prod', 'info.x-cortex-relationships[0].destinations[0].tag', true, undefined],
      ['entity', 'deployer', 'info.x-cortex-relationships[0].sources[0].tag', false, undefined],
      ['entity', 'release-1', 'info.x-cortex-relationships[1].tag', true, undefined],
    ]);
    expect(object.doc.locate(refs[1]?.path ?? [])).toEqual({ line: 8, column: 21 });
  });

  it('names no entity type for the built-in types', () => {
    for (const type of ['service', 'domain', 'team']) {
      const object = only(parse('  x-cortex-tag: x', `  x-cortex-type: ${type}`));
      expect(entityReferences(object)).toEqual([]);
    }
  });
});

describe('entityDescriptorSchema', () => {
  it('exports as JSON Schema for editors', () => {
    const schema = z.toJSONSchema(entityDescriptorSchema, { io: 'input' }) as { required?: string[] };
    expect(schema.required).toEqual(['openapi', 'info']);
  });
});
