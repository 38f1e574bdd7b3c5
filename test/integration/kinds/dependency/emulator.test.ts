import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DesiredObject, LiveObject } from '../../../../src/core/model.js';
import type { KindChange } from '../../../../src/kinds/types.js';
import { createDependencyKind, dependencyKind } from '../../../../src/kinds/dependency/index.js';
import type { DependencySpec, LiveDependency } from '../../../../src/kinds/dependency/schema.js';
import { changeFor, type Harness, startHarness } from '../../../kinds/entity-type/emulator-harness.js';
import { parsedDoc } from '../../../kinds/entity-type/parsed-doc.js';
import { AT } from '../../../kinds/parse-context.js';

const edges = (text: string): DesiredObject<DependencySpec>[] => {
  const { objects, diagnostics } = dependencyKind.manifest.parse(parsedDoc(text, '.cortex/dependencies/deps.yaml'), AT);
  if (diagnostics.length > 0) throw new Error(diagnostics[0]?.message);
  return objects;
};

const PAYMENTS = edges(`callerTag: payments
dependencies:
  - tag: ledger
    method: POST
    path: /v1/entries
    description: writes ledger rows
    metadata: {prod: true, owner: {team: core}}
  - tag: users
`);

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
  for (const tag of ['payments', 'ledger', 'users', 'billing', 'search']) await h.createEntity(tag);
  h.sent.length = 0;
});
afterEach(async () => {
  await h.stop();
});

const creates = (objs: readonly DesiredObject<DependencySpec>[]): KindChange<DependencySpec, LiveDependency>[] =>
  objs.map((o) => changeFor(dependencyKind, o, undefined));
const byId = (live: readonly LiveObject<LiveDependency>[]) => new Map(live.map((o) => [o.id, o]));

describe('dependency against the emulator', () => {
  it('creates edges with one bulk PUT and reads them back equal to the manifest', async () => {
    const outcomes = await dependencyKind.write.applyBatch!(creates(PAYMENTS), h.applyContext());
    expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined]);
    expect(h.sent.map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /api/v1/catalog/dependencies']);
    expect(h.sent[0]?.body).toEqual({
      values: {
        payments: [
          {
            tag: 'ledger',
            method: 'POST',
            path: '/v1/entries',
            description: 'writes ledger rows',
            metadata: { prod: true, owner: { team: 'core' } },
          },
          { tag: 'users' },
        ],
      },
    });
    const live = byId(await dependencyKind.live.fetch(h.fetchContext(PAYMENTS)));
    for (const desired of PAYMENTS) {
      const edge = live.get(desired.id);
      expect(edge, desired.id).toBeDefined();
      expect(dependencyKind.live.canonical(edge!)).toEqual(dependencyKind.manifest.canonical(desired));
    }
  });

  it('reads only the callers it declares or manages, once each, and a caller that does not exist yet has no edges', async () => {
    await dependencyKind.write.applyBatch!(
      creates([
        ...PAYMENTS,
        ...edges('callerTag: billing\ndependencies: [{tag: ledger}]\n'),
        ...edges('callerTag: search\ndependencies: [{tag: users}]\n'),
      ]),
      h.applyContext(),
    );
    h.sent.length = 0;
    const desired = [...PAYMENTS, ...edges('callerTag: not-created-yet\ndependencies: [{tag: users}]\n')];
    const live = await dependencyKind.live.fetch(h.fetchContext(desired, ['billing→ledger']));
    expect(live.map((o) => o.id).sort()).toEqual([
      'billing→ledger',
      'payments→ledger POST /v1/entries',
      'payments→users',
    ]);
    expect(h.sent.map((r) => r.path).sort()).toEqual([
      '/api/v1/catalog/billing/dependencies',
      '/api/v1/catalog/not-created-yet/dependencies',
      '/api/v1/catalog/payments/dependencies',
    ]);
    expect(h.sent.every((r) => r.method === 'GET' && r.query?.includeIncoming === false)).toBe(true);
  });

  it('updates a description and clears removed metadata, then deletes with one bulk DELETE', async () => {
    await dependencyKind.write.applyBatch!(creates(PAYMENTS), h.applyContext());
    const changed = edges(`callerTag: payments
dependencies:
  - tag: ledger
    method: POST
    path: /v1/entries
    description: appends ledger rows
  - tag: users
`);
    const before = byId(await dependencyKind.live.fetch(h.fetchContext(changed)));
    const update = changeFor(dependencyKind, changed[0], before.get(changed[0]!.id));
    expect(dependencyKind.live.canonical(before.get(changed[0]!.id)!)).not.toEqual(
      dependencyKind.manifest.canonical(changed[0]!),
    );
    await dependencyKind.write.apply(update, h.applyContext());
    const after = byId(await dependencyKind.live.fetch(h.fetchContext(changed)));
    expect(dependencyKind.live.canonical(after.get(changed[0]!.id)!)).toEqual(
      dependencyKind.manifest.canonical(changed[0]!),
    );

    h.sent.length = 0;
    const deletes = [...after.values()].map((live) => changeFor(dependencyKind, undefined, live, 'delete'));
    const outcomes = await dependencyKind.write.applyBatch!(deletes, h.applyContext());
    expect(outcomes.every((o) => o.error === undefined)).toBe(true);
    expect(h.sent.map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /api/v1/catalog/dependencies']);
    expect(await dependencyKind.live.fetch(h.fetchContext(changed))).toEqual([]);
  });

  it('splits a large batch into requests under the body limit; a failed request fails exactly its own changes', async () => {
    const limit = 400;
    const kind = createDependencyKind({ bodyLimitBytes: limit });
    const many = edges(
      `callerTag: payments\ndependencies:\n${Array.from({ length: 12 }, (_, i) =>
        i === 5
          ? '  - {tag: nobody, method: GET, path: /gone}\n'
          : `  - {tag: ledger, method: GET, path: /v1/item/${i}, description: "${'d'.repeat(40)}"}\n`,
      ).join('')}`,
    );
    const outcomes = await kind.write.applyBatch!(creates(many), h.applyContext());
    const puts = h.sent.filter((r) => r.method === 'PUT');
    expect(puts.length).toBeGreaterThan(2);
    for (const put of puts) expect(Buffer.byteLength(JSON.stringify(put.body))).toBeLessThanOrEqual(limit);
    expect(outcomes).toHaveLength(many.length);

    // The request holding the edge to a missing entity failed; so did every edge sent with it, and only those.
    type BulkBody = { values: { payments: { path: string }[] } };
    const failedPut = puts
      .map((r) => r.body as BulkBody)
      .find((b) => b.values.payments.some((e) => e.path === '/gone'));
    const failedPaths = new Set(failedPut!.values.payments.map((e) => e.path));
    expect(failedPaths.has('/gone')).toBe(true);
    expect(failedPaths.size).toBeGreaterThan(1);
    for (const { change, error } of outcomes) {
      const path = change.desired?.spec.path ?? '';
      if (failedPaths.has(path)) expect(error?.message, change.id).toMatch(/upsert .*HTTP 404.*nobody/);
      else expect(error, change.id).toBeUndefined();
    }
    const live = byId(await kind.live.fetch(h.fetchContext(many)));
    expect(live.size).toBe(many.length - failedPaths.size);
  });
});
