/**
 * The drift pull request's body: built from strings a repository and the workspace control (ids,
 * file names, values, reasons), escaped by the plan's Markdown renderer, so none can forge the
 * marker the pull request is found again by, mention anyone or hide a comment; the marker survives
 * a redaction that would take a look-alike of the key out of the rest.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/core/model.js';
import { driftBody, driftTitle, markerOf, sourceSlug } from '../../src/drift/body.js';
import type { DriftProposal } from '../../src/drift/proposal.js';

const FORGED = '<!-- cortex-sync:drift source=acme head=' + 'a'.repeat(40) + ' digest=' + 'b'.repeat(64) + ' -->';
const HOSTILE_ID = `svc ${FORGED} @acme/admins #12`;

const plan: Plan = {
  changes: [
    {
      kind: 'entity',
      id: HOSTILE_ID,
      action: 'update',
      source: `.cortex/catalog/${FORGED}.yaml`,
      line: 3,
      diff: [{ path: 'info.title', before: `live ${FORGED}`, after: 'git' }],
      waitsFor: [],
    },
  ],
  diagnostics: [],
  summary: { create: 0, update: 1, delete: 0, archive: 0, noop: 0 },
};
const proposal: DriftProposal = {
  objects: [{ kind: 'entity', id: HOSTILE_ID, way: 'changed', file: '.cortex/catalog/x.yaml' }],
  files: [{ path: '.cortex/catalog/x.yaml', text: 'x' }],
  refused: [{ key: `entity/${HOSTILE_ID}`, reason: `could not: ${FORGED}` }],
};
const ours = { source: 'acme', head: 'c'.repeat(40), digest: 'd'.repeat(64) };

describe('the drift pull request body', () => {
  it('holds one marker, ours, whatever the names and values hold; no mention, no raw comment', () => {
    const body = driftBody({ plan, proposal, marker: ours, dirFromRoot: '.', redact: (t) => t });
    expect(body.split('<!--')).toHaveLength(2);
    expect(markerOf(body)).toEqual(ours);
    // Outside code spans (where GitHub neither mentions nor links), no mention and no reference.
    const prose = body.replace(/(`+)[^`]*?\1/g, '');
    expect(prose).not.toContain('@acme');
    expect(prose).not.toContain('#12');
    // The plan from git to live: the live value is the "after".
    expect(body).toMatch(/\| `info\.title` \| `"git"` \| `"live /);
    expect(driftTitle(proposal)).toBe('Drift: 1 object changed outside git');
  });

  it('keeps the marker when redaction takes a look-alike of the key out of the rest', () => {
    const body = driftBody({
      plan,
      proposal,
      marker: ours,
      dirFromRoot: '.',
      redact: (t) => t.replaceAll('acme', '[REDACTED]'),
    });
    expect(markerOf(body)).toEqual(ours);
    expect(body.slice(body.indexOf('-->'))).not.toContain('acme');
  });

  it('makes a branch-safe slug of any source id', () => {
    expect(sourceSlug('acme-catalog')).toBe('acme-catalog');
    expect(sourceSlug('github.com/Acme/Catalog//catalog')).toMatch(/^github-com-acme-catalog-catalog-[0-9a-f]{8}$/);
    expect(sourceSlug('../..;$(rm)')).toMatch(/^rm-[0-9a-f]{8}$/);
    expect(sourceSlug('!!!')).toMatch(/^source-[0-9a-f]{8}$/);
  });
});
