/**
 * What the plan says about a source id bound to another origin, and about patterns dropped since
 * the source's record: counts in plain English, and a source id printed once escaped (a newline in
 * it shows as `\n`, not as `\\n`, which would say the id holds a backslash).
 */
import { describe, expect, it } from 'vitest';
import { bindingDiagnostics, sourceBinding } from '../../src/core/source-binding.js';
import { deleteScopeOf } from '../../src/engine/delete-scope.js';
import { renderDiagnostics } from '../../src/render/diagnostics.js';

const claimed = (sourceId: string) =>
  sourceBinding({
    sourceId,
    origin: 'github.com/acme/repo-a',
    record: { exists: true, origin: 'github.com/acme/repo-b' },
    allowTakeover: false,
  });

describe('source-claimed', () => {
  it('counts the removals it left out in words: 1 removal, 3 removals', () => {
    expect(bindingDiagnostics(claimed('repo-b'), 1)[0]?.message).toContain('(1 removal left out of this plan)');
    expect(bindingDiagnostics(claimed('repo-b'), 3)[0]?.message).toContain('(3 removals left out of this plan)');
    expect(bindingDiagnostics(claimed('repo-b'), 3)[0]?.message).not.toContain('(s)');
  });

  it('prints a source id holding a newline escaped once, on one line', () => {
    const [diagnostic] = bindingDiagnostics(claimed('evil\nprune: true'), 0);
    const text = renderDiagnostics(diagnostic ? [diagnostic] : [], { color: false });
    expect(text).toContain('source id `evil\\nprune: true` belongs to origin');
    expect(text).not.toContain('\\\\n');
    expect(text.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('source-claimed between origins that look alike', () => {
  it('path:/x/catalog and /x/catalog are told apart by their kind, each quoted', () => {
    const binding = sourceBinding({
      sourceId: 'catalog',
      origin: '/x/catalog',
      record: { exists: true, origin: 'path:/x/catalog' },
      allowTakeover: false,
    });
    const message = bindingDiagnostics(binding, 0)[0]?.message ?? '';
    expect(message).toContain('`path:/x/catalog` (a local folder with no git remote)');
    expect(message).toContain('`/x/catalog` (an origin named by CORTEX_SYNC_ORIGIN)');
    expect(message).toContain('--allow-takeover');
  });

  it('bound to a repository, run from a folder without a remote: says to run from a clone', () => {
    const binding = sourceBinding({
      sourceId: 'catalog',
      origin: 'path:/home/me/catalog',
      record: { exists: true, origin: 'github.com/acme/catalog' },
      allowTakeover: false,
    });
    const message = bindingDiagnostics(binding, 0)[0]?.message ?? '';
    expect(message).toContain('`github.com/acme/catalog` (the git repository');
    expect(message).toContain('run from a clone of that repository');
  });
});

describe('protect patterns dropped since the record', () => {
  it('are counted in words', () => {
    const config = {
      sourceId: 'repo-b',
      prune: true,
      pruneEntities: 'archive' as const,
      maxDeleteShare: 0.25,
      protect: [] as string[],
      allowMassDelete: false,
      allowTakeover: false,
    };
    const effect = (protect: string[]) =>
      deleteScopeOf(config, { protect }, undefined).widened.find((w) => w.setting === 'protect')?.effect;
    expect(effect(['entity/a'])).toBe('no longer protected: 1 pattern the ownership record has from an earlier apply');
    expect(effect(['entity/a', 'entity/b'])).toContain('2 patterns the ownership record has');
  });
});
