import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseManifestFile } from '../../src/source/yaml.js';
import { formatFieldPath, zodIssuesToDiagnostics } from '../../src/source/zod-diagnostics.js';

const schema = z.strictObject({
  info: z.strictObject({
    title: z.string().min(1),
    owners: z.array(z.strictObject({ type: z.enum(['group', 'email', 'slack', 'GROUP']), name: z.string() })),
    version: z.union([z.string(), z.number()]).optional(),
  }),
});

const diagnose = (text: string) => {
  const [doc] = parseManifestFile('m.yaml', text).documents;
  if (!doc) throw new Error('no document');
  const result = schema.safeParse(doc.value);
  if (result.success) return [];
  return zodIssuesToDiagnostics(result.error.issues, doc, { kind: 'entity', id: 'svc' });
};

describe('zodIssuesToDiagnostics', () => {
  it('formats field paths dotted with [i]', () => {
    expect(formatFieldPath(['info', 'x-cortex-owners', 0, 'name'])).toBe('info.x-cortex-owners[0].name');
    expect(formatFieldPath([])).toBe('');
  });

  it('says what was expected and what was found, at the position of the field', () => {
    const diagnostics = diagnose(
      ['info:', '  title: ""', '  owners:', '    - type: team', '      name: 7', '  version: [1]', ''].join('\n'),
    );
    expect(diagnostics.map((d) => [d.line, d.column, d.field, d.message])).toEqual([
      [2, 3, 'info.title', 'info.title: must not be empty'],
      [4, 7, 'info.owners[0].type', "info.owners[0].type: expected one of group, email, slack, got 'team'"],
      [5, 7, 'info.owners[0].name', 'info.owners[0].name: expected a string, got number 7'],
      [6, 3, 'info.version', 'info.version: expected a string or a number, got a list'],
    ]);
    for (const d of diagnostics)
      expect(d).toMatchObject({ severity: 'error', file: 'm.yaml', kind: 'entity', id: 'svc' });
  });

  it('reports a missing required field at its parent and each unknown key at the key', () => {
    const diagnostics = diagnose(['info:', '  owners: []', '  colour: red', '  size: 3', 'extra: 1', ''].join('\n'));
    expect(diagnostics.map((d) => [d.line, d.column, d.message])).toEqual([
      [1, 1, 'info.title: is required'],
      [3, 3, 'info.colour: unknown key `colour`'],
      [4, 3, 'info.size: unknown key `size`'],
      [5, 1, 'extra: unknown key `extra`'],
    ]);
  });

  it('explains a document that is not a mapping', () => {
    const diagnostics = diagnose('just text\n');
    expect(diagnostics.map((d) => [d.line, d.message])).toEqual([
      [1, "the document must be a mapping, got 'just text'"],
    ]);
  });
});
