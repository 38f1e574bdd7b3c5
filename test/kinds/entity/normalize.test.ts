/**
 * Canonical forms: a manifest and the descriptor the API gives back compare equal exactly when the
 * entity is in sync. Desired sides go through the real loader and schema; live sides are shaped as
 * the API returns descriptors (JSON, its own key order, marker added).
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/core/model.js';
import { entityKind } from '../../../src/kinds/entity/index.js';
import { canonicalDescriptor, toJsonValue } from '../../../src/kinds/entity/normalize.js';
import { entity, type LiveEntity, parseEntities, SOURCE_ID } from './helpers.js';

const live = (descriptor: JsonObject): LiveEntity => ({
  kind: 'entity',
  id: JSON.stringify((descriptor.info as JsonObject)['x-cortex-tag']).slice(1, -1),
  state: { descriptor },
});

const marker = { 'cortex-sync': { source: SOURCE_ID } };

/** Is the manifest in sync with this live descriptor? */
const inSync = (manifest: string, descriptor: JsonObject): boolean => {
  const desired = entityKind.manifest.canonical(entity(manifest));
  const liveSide = entityKind.live.canonical(live(descriptor));
  return JSON.stringify(desired) === JSON.stringify(liveSide);
};

describe('entity canonical form: what counts as the same', () => {
  it('ignores key order, the openapi version and its quoting', () => {
    const manifest = `
info:
  x-cortex-git:
    github: { repository: acme/pay, basepath: svc }
  title: Payments
  x-cortex-tag: payments
openapi: 3.0.1
`;
    expect(
      inSync(manifest, {
        openapi: '3.0.0',
        info: {
          title: 'Payments',
          'x-cortex-tag': 'payments',
          'x-cortex-git': { github: { basepath: 'svc', repository: 'acme/pay' } },
        },
      }),
    ).toBe(true);
  });

  it('fills in the default type service on either side', () => {
    const manifest = 'openapi: "3.0.0"\ninfo: {title: A, x-cortex-tag: a}\n';
    expect(
      inSync(manifest, { openapi: '3.0.0', info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-type': 'service' } }),
    ).toBe(true);
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a' } })).toBe(true);
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-type': 'domain' } })).toBe(false);
  });

  it('drops x-cortex keys the API does not keep (the loader warns about them)', () => {
    const manifest = `
openapi: 3.0.1
info:
  title: Incident trends
  x-cortex-tag: incident-trends
  x-cortex-description: not a Cortex key
  x-cortex-custom-data: { a: 1 }
`;
    const { diagnostics } = parseEntities(manifest);
    expect(diagnostics.filter((d) => d.code === 'unknown-key').map((d) => d.field)).toEqual([
      'info.x-cortex-description',
      'info.x-cortex-custom-data',
    ]);
    expect(
      inSync(manifest, { openapi: '3.0.1', info: { title: 'Incident trends', 'x-cortex-tag': 'incident-trends' } }),
    ).toBe(true);
  });

  it('keeps info keys that are not x-cortex keys (version, contact, other extensions)', () => {
    const manifest =
      'openapi: 3.0.1\ninfo: {title: A, x-cortex-tag: a, version: "1.2", x-service-custom-integration-mappings: [x]}\n';
    expect(
      inSync(manifest, {
        info: { title: 'A', 'x-cortex-tag': 'a', version: '1.2', 'x-service-custom-integration-mappings': ['x'] },
      }),
    ).toBe(true);
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', version: '1.2' } })).toBe(false);
  });

  it('reads the legacy x-cortex-domain-parents and x-cortex-service-groups as today’s keys', () => {
    const manifest = `
info:
  title: Mobile SDK
  x-cortex-tag: mobile-sdk
  x-cortex-service-groups: [mobile, tier-2]
  x-cortex-domain-parents:
    - tag: mobile-domain
openapi: 3.0.0
servers:
  - url: /
`;
    expect(
      inSync(manifest, {
        openapi: '3.0.0',
        servers: [{ url: '/' }],
        info: {
          title: 'Mobile SDK',
          'x-cortex-tag': 'mobile-sdk',
          'x-cortex-groups': ['tier-2', 'mobile'],
          'x-cortex-parents': [{ tag: 'mobile-domain' }],
        },
      }),
    ).toBe(true);
    // The emulator (and perhaps the API) keeps the legacy spelling as written: also the same.
    expect(
      inSync(manifest, {
        servers: [{ url: '/' }],
        info: {
          title: 'Mobile SDK',
          'x-cortex-tag': 'mobile-sdk',
          'x-cortex-service-groups': ['mobile', 'tier-2'],
          'x-cortex-domain-parents': [{ tag: 'mobile-domain' }],
        },
      }),
    ).toBe(true);
  });

  it('compares top-level OpenAPI content (servers, paths) as is', () => {
    const manifest = 'openapi: 3.0.1\ninfo: {title: A, x-cortex-tag: a}\nservers: [{url: /}]\n';
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a' }, servers: [{ url: '/v2' }] })).toBe(false);
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a' } })).toBe(false);
  });

  it('treats null, [] and {} directly under info as not set', () => {
    const manifest = `
openapi: 3.0.1
info:
  title: Knox
  x-cortex-tag: knox
  description:
  x-cortex-link:
  x-cortex-dependency: []
  x-cortex-definition: {}
`;
    expect(inSync(manifest, { info: { title: 'Knox', 'x-cortex-tag': 'knox' } })).toBe(true);
  });
});

describe('entity canonical form: sets and lists', () => {
  const base = 'openapi: 3.0.1\ninfo:\n  title: A\n  x-cortex-tag: a\n';

  it('treats groups as a set of strings', () => {
    const manifest = `${base}  x-cortex-groups: [lang-go, 'tier:0', lang-go]\n`;
    expect(
      inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-groups': ['tier:0', 'lang-go'] } }),
    ).toBe(true);
    expect(
      inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-groups': ['tier:1', 'lang-go'] } }),
    ).toBe(false);
  });

  it('treats owners as a set, with owner type in any case', () => {
    const manifest = `${base}  x-cortex-owners:
    - type: group
      name: payments-team
      provider: CORTEX
    - type: EMAIL
      email: jane@example.com
    - type: slack
      channel: team-payments
      notificationsEnabled: true
`;
    const owners: JsonObject[] = [
      { type: 'SLACK', channel: 'team-payments', notificationsEnabled: true },
      { email: 'jane@example.com', type: 'email' },
      { provider: 'CORTEX', name: 'payments-team', type: 'GROUP' },
    ];
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-owners': owners } })).toBe(true);
    const changed = [...owners.slice(0, 2), { provider: 'CORTEX', name: 'billing-team', type: 'GROUP' }];
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-owners': changed } })).toBe(false);
    const notified = [{ ...owners[0], notificationsEnabled: false }, ...owners.slice(1)];
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-owners': notified } })).toBe(false);
  });

  it('treats parents, children, dependencies, relationships, team members and slack channels as sets', () => {
    const manifest = `${base}  x-cortex-type: team
  x-cortex-children: [{tag: b}, {tag: c}]
  x-cortex-parents: [{tag: p1}, {tag: p2}]
  x-cortex-dependency:
    - {tag: ledger, method: POST, path: /v1/entries}
    - {tag: audit}
  x-cortex-relationships:
    - type: runs-in
      destinations: [{tag: aws-prod}, {tag: aws-dev}]
  x-cortex-team:
    members:
      - {name: Jane, email: jane@example.com}
      - {name: Joe, email: joe@example.com, notificationsEnabled: true}
  x-cortex-slack:
    channels: [{name: one}, {name: two, notificationsEnabled: true}]
`;
    const info: JsonObject = {
      title: 'A',
      'x-cortex-tag': 'a',
      'x-cortex-type': 'team',
      'x-cortex-slack': { channels: [{ notificationsEnabled: true, name: 'two' }, { name: 'one' }] },
      'x-cortex-team': {
        members: [
          { email: 'joe@example.com', name: 'Joe', notificationsEnabled: true },
          { email: 'jane@example.com', name: 'Jane' },
        ],
      },
      'x-cortex-relationships': [{ type: 'runs-in', destinations: [{ tag: 'aws-dev' }, { tag: 'aws-prod' }] }],
      'x-cortex-dependency': [{ tag: 'audit' }, { path: '/v1/entries', method: 'POST', tag: 'ledger' }],
      'x-cortex-parents': [{ tag: 'p2' }, { tag: 'p1' }],
      'x-cortex-children': [{ tag: 'c' }, { tag: 'b' }],
    };
    expect(inSync(manifest, { info })).toBe(true);
    expect(inSync(manifest, { info: { ...info, 'x-cortex-children': [{ tag: 'b' }] } })).toBe(false);
  });

  it('keeps the order of links (the UI shows them as written)', () => {
    const manifest = `${base}  x-cortex-link:
    - {name: Runbook, type: runbook, url: https://wiki/run}
    - {name: Docs, type: documentation, url: https://wiki/docs}
`;
    const runbook = { name: 'Runbook', type: 'runbook', url: 'https://wiki/run' };
    const docs = { url: 'https://wiki/docs', type: 'documentation', name: 'Docs' };
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-link': [runbook, docs] } })).toBe(
      true,
    );
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-link': [docs, runbook] } })).toBe(
      false,
    );
  });

  it('keeps the order of lists inside user data (custom metadata, definition)', () => {
    const manifest = `${base}  x-cortex-custom-metadata:\n    regions: [eu, us]\n`;
    expect(
      inSync(manifest, {
        info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': { regions: ['eu', 'us'] } },
      }),
    ).toBe(true);
    expect(
      inSync(manifest, {
        info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': { regions: ['us', 'eu'] } },
      }),
    ).toBe(false);
  });
});

describe('entity canonical form: scalars and text', () => {
  const base = 'openapi: 3.0.1\ninfo:\n  title: A\n  x-cortex-tag: a\n';

  it('keeps scalar types: a number and a string with the same digits differ', () => {
    const manifest = `${base}  x-cortex-oncall:\n    pagerduty: {id: 12435, type: SERVICE}\n`;
    const oncall = (id: string | number) => ({ pagerduty: { type: 'SERVICE', id } });
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-oncall': oncall(12435) } })).toBe(
      true,
    );
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-oncall': oncall('12435') } })).toBe(
      false,
    );
  });

  it('reads timestamps and YAML-1.1 booleans in user data as the strings YAML 1.2 makes them', () => {
    const manifest = `${base}  x-cortex-custom-metadata:\n    generated: 2024-01-25T14:45:14.646626276\n    flag: yes\n`;
    const metadata = { generated: '2024-01-25T14:45:14.646626276', flag: 'yes' };
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': metadata } })).toBe(
      true,
    );
  });

  it('compares title and description exactly (whitespace included)', () => {
    const manifest = `${base}  description: >\n    Handles payments.\n`;
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', description: 'Handles payments.\n' } })).toBe(
      true,
    );
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', description: 'Handles payments.' } })).toBe(
      false,
    );
    expect(inSync(manifest, { info: { title: 'a', 'x-cortex-tag': 'a', description: 'Handles payments.\n' } })).toBe(
      false,
    );
  });

  it('compares the type without surrounding whitespace', () => {
    const manifest = `${base}  x-cortex-type: 's3 '\n  x-cortex-definition: {region: eu}\n`;
    const info = { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-definition': { region: 'eu' } };
    expect(inSync(manifest, { info: { ...info, 'x-cortex-type': 's3' } })).toBe(true);
    expect(entityKind.entityTypeOf?.(entity(manifest))).toBe('s3');
  });
});

describe('entity canonical form: the ownership marker', () => {
  const manifest = 'openapi: 3.0.1\ninfo: {title: A, x-cortex-tag: a}\n';

  it('is not part of the comparison, alone or beside user metadata', () => {
    expect(inSync(manifest, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': marker } })).toBe(
      true,
    );
    const withTier = `openapi: 3.0.1\ninfo: {title: A, x-cortex-tag: a, x-cortex-custom-metadata: {tier: 0}}\n`;
    const metadata = { ...marker, tier: 0 };
    expect(inSync(withTier, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': metadata } })).toBe(
      true,
    );
    expect(inSync(withTier, { info: { title: 'A', 'x-cortex-tag': 'a', 'x-cortex-custom-metadata': marker } })).toBe(
      false,
    );
  });

  it('is a reserved key in manifests', () => {
    const { objects, diagnostics } = parseEntities(`openapi: 3.0.1
info:
  title: A
  x-cortex-tag: a
  x-cortex-custom-metadata:
    cortex-sync: {source: someone-else}
`);
    expect(objects).toEqual([]);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'reserved-key',
      line: 6,
      field: 'info.x-cortex-custom-metadata.cortex-sync',
    });
  });

  it('a source’s claim (merge mode, ADR 0004) is reserved too', () => {
    const { objects, diagnostics } = parseEntities(`openapi: 3.0.1
info:
  title: A
  x-cortex-tag: a
  x-cortex-custom-metadata:
    tier: 1
    cortex-sync-merge-0123456789ab: {source: someone-else}
`);
    expect(objects).toEqual([]);
    expect(diagnostics.filter((d) => d.severity === 'error')).toMatchObject([
      { code: 'reserved-key', line: 7, field: 'info.x-cortex-custom-metadata.cortex-sync-merge-0123456789ab' },
    ]);
  });
});

describe('toJsonValue / canonicalDescriptor', () => {
  it('turns non-JSON values into JSON and leaves undefined members out', () => {
    expect(toJsonValue({ a: undefined, b: new Date(0), c: [undefined, Number.NaN] })).toEqual({
      b: '1970-01-01T00:00:00.000Z',
      c: [null, null],
    });
  });

  it('gives the same text for the same descriptor whatever its key order', () => {
    const a = canonicalDescriptor({
      info: { 'x-cortex-tag': 'a', title: 'A', 'x-cortex-git': { github: { repository: 'r', alias: 'x' } } },
    });
    const b = canonicalDescriptor({
      info: { 'x-cortex-git': { github: { alias: 'x', repository: 'r' } }, title: 'A', 'x-cortex-tag': 'a' },
    });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

describe('entity canonical form, run after run', () => {
  it('is built once per parsed manifest: the same spec gives the very same form, an edited one its own', () => {
    const manifest = 'openapi: 3.0.1\ninfo:\n  title: Payments\n  x-cortex-tag: payments\n  x-cortex-groups: [b, a]\n';
    const kept = entity(manifest);
    const first = entityKind.manifest.canonical(kept);
    // The watcher's parse cache hands the plan the same object again: nothing is rebuilt.
    expect(entityKind.manifest.canonical(kept)).toBe(first);
    const edited = entity(manifest.replace('Payments', 'Payments API'));
    const form = entityKind.manifest.canonical(edited) as { info: JsonObject };
    expect(form.info.title).toBe('Payments API');
    expect((first as { info: JsonObject }).info.title).toBe('Payments');
    expect(form.info['x-cortex-groups']).toEqual(['a', 'b']);
  });
});
