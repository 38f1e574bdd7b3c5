/**
 * Planning entities in merge mode (docs/adr-0004-co-ownership.md), pure: only declared keys are
 * compared, keys dropped since the record are shown going away, another source's claim on a key is
 * a field-conflict (its record not saying which keys counts as every key: fail closed), and
 * existence is never this source's unless it owns the entity.
 */
import { describe, expect, it } from 'vitest';
import { buildPlan, type PlanOptions } from '../../../src/core/plan.js';
import type { ObjectKey } from '../../../src/core/model.js';
import type { Declaration } from '../../../src/core/record-meta.js';
import { createEntityKind } from '../../../src/kinds/entity/index.js';
import { claimKeyOf, claimPathOf } from '../../../src/kinds/entity/merge.js';
import { mergePatchFor } from '../../../src/kinds/entity/merge-apply.js';
import { parseManifestFile } from '../../../src/source/yaml.js';
import { AT } from '../parse-context.js';
import type { DesiredEntity, LiveEntity } from './helpers.js';

const merge = createEntityKind({ entityWrites: 'merge' });
const ME = 'platform';

/** The one entity of a merge manifest (which may leave out its title). */
const entity = (text: string): DesiredEntity => {
  const [doc] = parseManifestFile('x.yaml', text).documents;
  if (doc === undefined) throw new Error('no document');
  const result = merge.manifest.parse(doc, AT);
  expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return result.objects[0] as DesiredEntity;
};

const liveOf = (info: Record<string, unknown>, owner?: string, archived = false): LiveEntity => ({
  kind: 'entity',
  id: String(info['x-cortex-tag']),
  ...(owner !== undefined ? { owner } : {}),
  ...(archived ? { archived: true } : {}),
  state: { descriptor: { openapi: '3.0.1', info }, summary: undefined } as unknown as LiveEntity['state'],
});

const plan = (text: string, live: LiveEntity | undefined, options: Partial<PlanOptions> = {}) =>
  buildPlan({
    desired: [entity(text)],
    live: live ? [live] : [],
    handlers: [merge],
    options: {
      sourceId: ME,
      prune: false,
      allowTakeover: false,
      allowMassDelete: false,
      protect: [],
      manifestsComplete: true,
      ...options,
    },
  });

const groupsOnly = 'openapi: 3.0.1\ninfo:\n  x-cortex-tag: svc\n  x-cortex-groups: [tier-1]\n';
const foreign = {
  'x-cortex-tag': 'svc',
  title: 'Service',
  'x-cortex-type': 'component',
  'x-cortex-groups': ['tier-1'],
  'x-cortex-oncall': { pagerduty: { id: 'P1', type: 'SCHEDULE' } },
  // This source names itself on the entity it writes keys into (ADR 0004, "Conflicts").
  'x-cortex-custom-metadata': { 'cortex-sync': { source: 'svc-repo' }, [claimKeyOf(ME)]: { source: ME }, other: 1 },
};
const declared = (keys: string[]): ReadonlyMap<ObjectKey, Declaration> =>
  new Map([['entity/svc', { file: 'x.yaml', keys }]]);

describe('merge mode plans', () => {
  it('compares only declared keys: an entity another source owns, with foreign keys, is a noop and not an ownership conflict', () => {
    const p = plan(groupsOnly, liveOf(foreign, 'svc-repo'), {
      otherClaims: () => [{ source: 'svc-repo', keys: ['info.title', 'info.x-cortex-type'] }],
    });
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(p.changes[0]).toMatchObject({ action: 'noop' });
  });

  it('shows a key dropped since the record going away, and nothing else', () => {
    const p = plan(groupsOnly, liveOf({ ...foreign, description: 'old' }, 'svc-repo'), {
      declaredBefore: declared(['info.description', 'info.x-cortex-groups']),
    });
    const change = p.changes[0];
    expect(change).toMatchObject({ action: 'update', dropsKeys: ['info.description'] });
    expect(change?.diff.map((d) => d.path)).toEqual(['info.description']);
    expect(change?.adopt).toBeUndefined();
  });

  it('a key another source declares is a field-conflict naming both sources and the key; forced, the plan says what is taken over', () => {
    const claims = () => [{ source: 'svc-repo', keys: ['info.x-cortex-groups'] }];
    const refused = plan(groupsOnly, liveOf(foreign, 'svc-repo'), { otherClaims: claims });
    const error = refused.diagnostics.find((d) => d.code === 'field-conflict');
    expect(error?.message).toMatch(/`info\.x-cortex-groups` is declared by source `platform` and by source `svc-repo`/);
    const forced = plan(groupsOnly.replace('tier-1', 'tier-2'), liveOf(foreign, 'svc-repo'), {
      otherClaims: claims,
      forceConflicts: true,
    });
    expect(forced.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(forced.changes[0]?.reason).toMatch(
      /take over `info\.x-cortex-groups` from source `svc-repo` \(--force-conflicts\)/,
    );
  });

  it('fails closed: an owner whose record does not say its keys (or does not list the entity) claims every key', () => {
    const silent = plan(groupsOnly, liveOf(foreign, 'svc-repo'), { otherClaims: () => [{ source: 'svc-repo' }] });
    expect(silent.diagnostics.find((d) => d.code === 'field-conflict')?.message).toMatch(/does not say which keys/);
    const unlisted = plan(groupsOnly, liveOf(foreign, 'svc-repo'));
    expect(unlisted.diagnostics.find((d) => d.code === 'field-conflict')?.message).toMatch(/does not say which keys/);
  });

  it('never adopts an unowned entity, never unarchives one it does not own, and refuses a title-less create', () => {
    const unowned = plan(
      groupsOnly.replace('tier-1', 'tier-9'),
      liveOf({ ...foreign, 'x-cortex-custom-metadata': {} }),
    );
    expect(unowned.changes[0]).toMatchObject({ action: 'update' });
    expect(unowned.changes[0]?.adopt).toBeUndefined();
    const archived = plan(groupsOnly.replace('tier-1', 'tier-9'), liveOf(foreign, 'svc-repo', true), {
      otherClaims: () => [{ source: 'svc-repo', keys: ['info.title'] }],
    });
    expect(archived.changes[0]).toMatchObject({ action: 'noop' });
    expect(archived.diagnostics.map((d) => d.code)).toContain('archived-elsewhere');
    const create = plan(groupsOnly, undefined);
    expect(create.diagnostics.map((d) => d.code)).toContain('merge-create-needs-title');
  });

  it('writing into an entity it does not own, a source names itself on it: the plan shows that write, and the PATCH holds it', () => {
    const { [claimKeyOf(ME)]: _mine, ...others } = foreign['x-cortex-custom-metadata'];
    const p = plan(groupsOnly, liveOf({ ...foreign, 'x-cortex-custom-metadata': others }, 'svc-repo'), {
      otherClaims: () => [{ source: 'svc-repo', keys: ['info.title'] }],
    });
    expect(p.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const change = p.changes[0];
    expect(change).toMatchObject({ action: 'update', writesClaim: true });
    expect(change?.diff).toEqual([{ path: claimPathOf(ME), after: { source: ME } }]);
    const body = mergePatchFor(change as Parameters<typeof mergePatchFor>[0], ME).body as {
      info: Record<string, unknown>;
    };
    expect(body.info['x-cortex-custom-metadata']).toEqual({ [claimKeyOf(ME)]: { source: ME } });
    expect(body.info['x-cortex-groups']).toEqual(['tier-1']);
    // The owner names itself with its marker: no claim.
    const owned = plan(
      groupsOnly,
      liveOf({ ...foreign, 'x-cortex-custom-metadata': { 'cortex-sync': { source: ME } } }, ME),
    );
    expect(owned.changes[0]).toMatchObject({ action: 'noop' });
  });

  it('a source named on the entity whose record could not be read is a refusal that --force-conflicts does not lift; one whose record does not list it claims nothing', () => {
    const named = { ...foreign['x-cortex-custom-metadata'], [claimKeyOf('other-repo')]: { source: 'other-repo' } };
    const live = liveOf({ ...foreign, 'x-cortex-custom-metadata': named }, 'svc-repo');
    const ownerClaims = () => [{ source: 'svc-repo', keys: ['info.title'] }];
    const refused = plan(groupsOnly, live, {
      otherClaims: ownerClaims,
      forceConflicts: true,
      recordUnreadable: (s) => (s === 'other-repo' ? 'HTTP 500: down' : undefined),
    });
    const error = refused.diagnostics.find((d) => d.code === 'claim-unconfirmed');
    expect(error?.severity).toBe('error');
    expect(error?.message).toMatch(/names source `other-repo`[\s\S]*HTTP 500: down/);
    // Its record read (or confirmed absent) without the entity: nothing claimed, nothing refused.
    const clear = plan(groupsOnly, live, { otherClaims: ownerClaims });
    expect(clear.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(clear.changes[0]).toMatchObject({ action: 'noop' });
    // Its record lists the entity with the key: a field-conflict, as any other source's.
    const conflict = plan(groupsOnly, live, {
      otherClaims: () => [...ownerClaims(), { source: 'other-repo', keys: ['info.x-cortex-groups'] }],
    });
    expect(conflict.diagnostics.find((d) => d.code === 'field-conflict')?.message).toMatch(/source `other-repo`/);
  });

  it('an archived entity of its own whose descriptor could not be read is refused, never unarchived blind', () => {
    const archived = liveOf(foreign, ME, true);
    archived.state = { descriptor: null, descriptorUnreadable: 'HTTP 503: busy' } as unknown as LiveEntity['state'];
    const p = plan(groupsOnly, archived);
    expect(p.changes[0]).toMatchObject({ action: 'noop' });
    expect(p.diagnostics.find((d) => d.code === 'merge-archived-unreadable')?.message).toMatch(/HTTP 503: busy/);
  });

  it('an owner in replace mode (its record lists the tag with its keys) writes the whole descriptor: every key conflicts', () => {
    const p = plan(groupsOnly, liveOf(foreign, 'svc-repo'), {
      otherClaims: () => [{ source: 'svc-repo', keys: ['info.title', 'info.x-cortex-tag', 'info.x-cortex-type'] }],
    });
    expect(p.diagnostics.find((d) => d.code === 'field-conflict')?.message).toMatch(
      /writes its whole descriptor \(replace\)/,
    );
  });
});
