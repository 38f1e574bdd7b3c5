/**
 * No branch on a kind's name outside src/kinds/: no string in the code of src/ (the emulator and
 * the benchmark are packages/ of their own: they speak the API and build repositories) equals a registered kind's name
 * or starts with one as an object key (`entity/…`). Read from the syntax tree, so a comment never
 * counts and a cast, a template literal or a disabled lint rule does not hide one; the names come
 * from the registry, so a new kind is covered by its registry line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { KIND_HANDLERS, READ_ONLY_KINDS } from '../../src/kinds/registry.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
/** Where kind names belong in src/: the kinds themselves. */
const EXEMPT = ['kinds/'];
const NAMES = [...KIND_HANDLERS, ...READ_ONLY_KINDS].map((k) => k.kind);

/** Every string in `text` (a TypeScript file) that names a kind: `line: "string"`. */
const kindNamesIn = (file: string, text: string): string[] => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const names = (value: string): boolean => NAMES.some((n) => value === n || value.startsWith(`${n}/`));
  const visit = (node: ts.Node): void => {
    const value =
      ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
        ? node.text
        : undefined;
    if (value !== undefined && names(value)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${file}:${line + 1}: ${JSON.stringify(value)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
};

describe('kind names outside src/kinds/', () => {
  it('are found however they are written', () => {
    const code = [
      "// a comment naming 'entity' is not code",
      "const a = 'entity' as KindName;",
      'if (kind === `scorecard`) run();',
      "const b = <const>('catalog-page');",
      'const key = `dependency/${id}`;',
      "type T = { kind: 'initiative' };",
      "const fine = 'an entity of this repository';",
    ].join('\n');
    expect(kindNamesIn('x.ts', code)).toEqual([
      'x.ts:2: "entity"',
      'x.ts:3: "scorecard"',
      'x.ts:4: "catalog-page"',
      'x.ts:5: "dependency/"',
      'x.ts:6: "initiative"',
    ]);
  });

  it('are none in src/ outside the kinds', () => {
    expect(NAMES.length).toBeGreaterThanOrEqual(7);
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .map((f) => f.split(sep).join('/'))
      .filter((f) => f.endsWith('.ts') && !EXEMPT.some((dir) => f.startsWith(dir)));
    expect(files.length).toBeGreaterThan(80);
    expect(files.flatMap((f) => kindNamesIn(`src/${f}`, readFileSync(join(SRC, f), 'utf8')))).toEqual([]);
  });
});
