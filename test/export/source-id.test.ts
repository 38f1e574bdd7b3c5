import { describe, expect, it } from 'vitest';
import type { LiveObject } from '../../src/core/model.js';
import { exportedKeys, ownersOfExported, sourceIdNote } from '../../src/export/source-id.js';

const obj = (kind: LiveObject['kind'], id: string, owner?: string): LiveObject => ({
  kind,
  id,
  state: {},
  ...(owner !== undefined ? { owner } : {}),
});

describe('the source id an export is written for', () => {
  const live = [
    obj('entity', 'a', 'repo-x'),
    obj('entity', 'b', 'repo-x'),
    obj('entity', 'c'),
    obj('entity', 'd', 'repo-y'),
  ];

  it('is the one source that manages what the export holds; unmanaged objects do not count', () => {
    const owners = ownersOfExported(live, exportedKeys([{ kind: 'entity', ids: ['a', 'b', 'c'] }]));
    expect(owners).toEqual(['repo-x']);
    expect(sourceIdNote(owners)).toMatchObject({ sourceId: 'repo-x' });
  });

  it('is none, with the reason, when several sources manage what it holds', () => {
    const owners = ownersOfExported(live, exportedKeys([{ kind: 'entity', ids: ['a', 'd'] }]));
    const note = sourceIdNote(owners);
    expect(note.sourceId).toBeUndefined();
    expect(note.message).toMatch(/managed by 2 sources \(`repo-x`, `repo-y`\), so no cortex-sync\.yaml was written/);
  });

  it('is none, and says nothing, when no source manages what it holds', () => {
    expect(sourceIdNote(ownersOfExported(live, exportedKeys([{ kind: 'entity', ids: ['c'] }])))).toEqual({});
  });

  it('escapes a source id that holds control characters', () => {
    expect(sourceIdNote(['evil\u001b[2Jid']).message).not.toContain('\u001b');
  });
});
