/**
 * The README's layout table is the one generated from the registry (`npm run docs:kinds`): one
 * row per managed kind saying where its manifests live, what identifies one, its JSON Schema and
 * its readme. A kind registered from a test (`test/conformance/entity-note/`) gets its row from its
 * folder alone: no README edit is part of adding a kind.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KINDS_END, KINDS_START, kindsTableMarkdown, withKindsTable } from '../../src/cli/readme-kinds.js';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { entityNoteKind } from '../conformance/entity-note/index.js';

const ROOT = join(import.meta.dirname, '..', '..');
const readme = () => readFile(join(ROOT, 'README.md'), 'utf8');

describe("the README's layout table", () => {
  it('is the one generated from the registry (run `npm run docs:kinds` after adding or changing a kind)', async () => {
    const committed = await readme();
    expect(committed, 'README.md’s layout table is stale').toBe(withKindsTable(committed));
  });

  it('has one row per kind, whose schema and readme exist', async () => {
    const committed = await readme();
    const table = committed.slice(committed.indexOf(KINDS_START), committed.indexOf(KINDS_END));
    const rows = table.split('\n').filter((line) => /^\| `[a-z-]+` \|/.test(line));
    expect(rows.map((row) => /^\| `([a-z-]+)`/.exec(row)?.[1]).sort()).toEqual(KIND_HANDLERS.map((k) => k.kind).sort());
    for (const row of rows) {
      for (const [, path] of row.matchAll(/\]\(([^)]+)\)/g)) expect(existsSync(join(ROOT, path!)), path).toBe(true);
    }
    const entity = rows.find((row) => row.startsWith('| `entity` |'));
    expect(entity).toContain('every cortex.yaml or cortex.yml, and `.cortex/catalog/**`');
    expect(entity).toContain('| `info.x-cortex-tag` |');
  });

  it('gets a new kind’s row from its folder alone', () => {
    const row = kindsTableMarkdown([...KIND_HANDLERS, entityNoteKind])
      .split('\n')
      .find((line) => line.startsWith('| `entity-note` |'));
    expect(row).toBe(
      '| `entity-note` | `.cortex/entity-notes/**` | `entity`, `key` | [schemas/entity-note.schema.json](schemas/entity-note.schema.json) | [src/kinds/entity-note/readme.md](src/kinds/entity-note/readme.md) |',
    );
  });

  it('refuses a kind that does not say what identifies it, and a README without its markers', () => {
    const unnamed = { ...entityNoteKind, layout: { ...entityNoteKind.layout, identity: undefined } };
    expect(() => kindsTableMarkdown([unnamed])).toThrow(/kind `entity-note` does not say what identifies one object/);
    expect(() => withKindsTable('# no markers\n')).toThrow(/kinds:start/);
  });

  it('keeps a cell whole whatever a kind says', () => {
    const odd = { ...entityNoteKind, layout: { ...entityNoteKind.layout, identity: 'a | b\nc' } };
    const row = kindsTableMarkdown([odd]).split('\n')[2]!;
    expect(row).toContain('| a \\| b c |');
    expect(row.split(/(?<!\\)\|/)).toHaveLength(7);
  });
});
