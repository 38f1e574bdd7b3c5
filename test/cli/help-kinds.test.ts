/**
 * `--help` names the kinds it manages from the registry (name, title, folders), not by hand: every
 * registered kind is there, and a kind registered by a test appears with no edit of the help text.
 */
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_HELP, kindsHelp } from '../../src/cli/help.js';
import { createRegistry, KIND_HANDLERS, REGISTERED_KINDS } from '../../src/kinds/registry.js';
import { entityNoteKind } from '../conformance/entity-note/index.js';

describe('--help’s kinds', () => {
  it('lists every registered kind with its title and folders, in apply order', () => {
    const lines = ENVIRONMENT_HELP.split('\n');
    const named = KIND_HANDLERS.map((kind) => lines.findIndex((line) => line.startsWith(`  ${kind.kind} `)));
    expect(named.every((i) => i >= 0)).toBe(true);
    expect([...named].sort((a, b) => a - b)).toEqual(named);
    expect(ENVIRONMENT_HELP).toMatch(/ {2}catalog-page +catalog page: \.cortex\/catalog-pages\//);
    expect(ENVIRONMENT_HELP).toMatch(
      / {2}entity +entity: \.cortex\/catalog\/, \.cortex\/domains\/, \.cortex\/teams\/,\s+every\s+cortex\.yaml/,
    );
  });

  it('names a kind registered by a test, from its folder alone', () => {
    const registry = createRegistry({ ...REGISTERED_KINDS, 'entity-note': entityNoteKind });
    expect(kindsHelp(registry.handlers)).toMatch(/ {2}entity-note +entity note: \.cortex\/entity-notes\//);
    expect(kindsHelp(KIND_HANDLERS)).not.toContain('entity-note');
  });
});
