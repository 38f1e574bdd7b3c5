import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../src/core/model.js';
import { inferredSourceIdLine, ownersOf, soleOwner } from '../../src/export/source-id.js';

const obj = (kind: LiveObject['kind'], id: string, owner?: string, archived = false): LiveObject => ({
  kind,
  id,
  state: {},
  ...(owner !== undefined ? { owner } : {}),
  ...(archived ? { archived: true } : {}),
});

describe('the source id an export is written for when nothing names one', () => {
  const live = [
    obj('entity', 'a', 'repo-x'),
    obj('entity', 'b', 'repo-x'),
    obj('entity', 'c'),
    obj('dependency', 'a→b', 'repo-y'),
    obj('entity', 'old', 'repo-z', true),
  ];
  const select = (kinds: LiveObject['kind'][], includeArchived = false) => ({ kinds: new Set(kinds), includeArchived });

  it('is the one source that manages the objects of the kinds exported; unmanaged objects do not count', () => {
    expect(soleOwner(ownersOf(live, select(['entity'])))).toBe('repo-x');
  });

  it('is none when several sources manage them (archived ones count only when exported)', () => {
    expect(ownersOf(live, select(['entity', 'dependency']))).toEqual(['repo-x', 'repo-y']);
    expect(soleOwner(ownersOf(live, select(['entity', 'dependency'])))).toBeUndefined();
    expect(soleOwner(ownersOf(live, select(['entity'], true)))).toBeUndefined();
  });

  it('is none when no source manages them', () => {
    expect(soleOwner(ownersOf([obj('entity', 'c')], select(['entity'])))).toBeUndefined();
  });

  it('is said with control characters escaped', () => {
    expect(inferredSourceIdLine('evil\u001b[2Jid')).not.toContain('\u001b');
  });
});
