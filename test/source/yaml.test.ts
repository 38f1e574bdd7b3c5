import { describe, expect, it } from 'vitest';
import { MAX_YAML_ERRORS_PER_FILE, parseManifestFile } from '../../src/source/yaml.js';

const lines = (...rows: string[]): string => `${rows.join('\n')}\n`;

describe('parseManifestFile', () => {
  it('locates nodes by path: map entries at their key, list items at the item, missing paths at the nearest ancestor', () => {
    const text = lines(
      'openapi: 3.0.1',
      'info:',
      '  title: Payments',
      '  x-cortex-owners:',
      '    - type: group',
      '      name: platform',
      '    - type: email',
      '      email: a@example.com',
    );
    const { documents, diagnostics } = parseManifestFile('cortex.yaml', text);
    expect(diagnostics).toEqual([]);
    const [doc] = documents;
    expect(doc?.value).toEqual({
      openapi: '3.0.1',
      info: {
        title: 'Payments',
        'x-cortex-owners': [
          { type: 'group', name: 'platform' },
          { type: 'email', email: 'a@example.com' },
        ],
      },
    });
    expect(doc?.locate(['info', 'title'])).toEqual({ line: 3, column: 3 });
    expect(doc?.locate(['info', 'x-cortex-owners'])).toEqual({ line: 4, column: 3 });
    expect(doc?.locate(['info', 'x-cortex-owners', 1])).toEqual({ line: 7, column: 7 });
    expect(doc?.locate(['info', 'x-cortex-owners', 1, 'email'])).toEqual({ line: 8, column: 7 });
    // Not there: the nearest existing ancestor.
    expect(doc?.locate(['info', 'x-cortex-owners', 1, 'provider'])).toEqual({ line: 7, column: 7 });
    expect(doc?.locate(['info', 'x-cortex-tag'])).toEqual({ line: 2, column: 1 });
    expect(doc?.locate([])).toEqual({ line: 1, column: 1 });
  });

  it('splits multi-document files, skips empty documents and keeps each document index and start line', () => {
    const text = lines('# header', '---', 'a: 1', '---', '# nothing here', '---', 'b: 2', '   # trailing');
    const { documents, diagnostics } = parseManifestFile('multi.yaml', text);
    expect(diagnostics).toEqual([]);
    expect(documents.map((d) => [d.index, d.line, d.value])).toEqual([
      [0, 3, { a: 1 }],
      [2, 7, { b: 2 }],
    ]);
    expect(documents[1]?.locate(['b'])).toEqual({ line: 7, column: 1 });
  });

  it('accepts a file of only comments with a warning, not an error', () => {
    const { documents, diagnostics } = parseManifestFile('empty.yaml', '# nothing yet\n\n# todo\n');
    expect(documents).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'empty-manifest', file: 'empty.yaml' }]);
  });

  it('reports every YAML error of a file with its line and column, not only the first', () => {
    const text = lines('a: b: c', '---', 'x: 1', '  y: 2', '---', 'c: ok');
    const { documents, diagnostics } = parseManifestFile('broken.yaml', text);
    expect(documents.map((d) => d.value)).toEqual([{ c: 'ok' }]);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.line, d.column])).toEqual([
      [1, 4],
      [3, 4],
      [3, 4],
    ]);
    for (const error of errors) {
      expect(error).toMatchObject({ file: 'broken.yaml', code: 'yaml-syntax' });
      expect(error.column).toBeGreaterThanOrEqual(1);
    }
  });

  it('reports each duplicate key as an error at the repeated key, naming it', () => {
    const text = lines('info:', '  title: A', '  x-cortex-link: []', '  title: B', '  x-cortex-link: []');
    const { documents, diagnostics } = parseManifestFile('dup.yaml', text);
    expect(documents).toEqual([]);
    expect(diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'duplicate-key', line: 4, column: 3 }),
      expect.objectContaining({ severity: 'error', code: 'duplicate-key', line: 5, column: 3 }),
    ]);
    expect(diagnostics[0]?.message).toContain('`title`');
    expect(diagnostics[1]?.message).toContain('`x-cortex-link`');
  });

  it('resolves anchors and aliases and merge keys', () => {
    const text = lines('base: &b {tier: 1}', 'svc:', '  <<: *b', '  name: x', 'copy: *b');
    const { documents, diagnostics } = parseManifestFile('anchors.yaml', text);
    expect(diagnostics).toEqual([]);
    expect(documents[0]?.value).toEqual({ base: { tier: 1 }, svc: { tier: 1, name: 'x' }, copy: { tier: 1 } });
  });

  it('rejects an alias bomb with a clear, located error instead of expanding it', () => {
    const rows = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) {
      const refs = Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ');
      rows.push(`a${i}: &a${i} [${refs}]`);
    }
    const { documents, diagnostics } = parseManifestFile('bomb.yaml', lines(...rows));
    expect(documents).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'yaml-alias-limit', file: 'bomb.yaml', line: 1 }]);
    expect(diagnostics[0]?.message).toMatch(/aliases/);
  });

  it('rejects a file over the size limit, naming the file, without parsing it', () => {
    const text = `a: ${'x'.repeat(200)}\n`;
    const { documents, diagnostics } = parseManifestFile('big/cortex.yaml', text, { maxFileBytes: 100 });
    expect(documents).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'file-too-large', file: 'big/cortex.yaml' }]);
    expect(diagnostics[0]?.message).toContain('big/cortex.yaml');
    expect(diagnostics[0]?.message).toContain('100 bytes');
    expect(parseManifestFile('big/cortex.yaml', text).diagnostics).toEqual([]);
  });

  it('keeps timestamps and versions as strings (YAML 1.2 core schema)', () => {
    const { documents } = parseManifestFile('t.yaml', 'ts: 2024-01-25T14:45:14.646626276\nopenapi: 3.0.1\n');
    expect(documents[0]?.value).toEqual({ ts: '2024-01-25T14:45:14.646626276', openapi: '3.0.1' });
  });

  it('rejects mapping keys that are collections (unrendered templates) instead of stringifying them', () => {
    const { documents, diagnostics } = parseManifestFile('t.yaml', 'info:\n  x-cortex-tag: {{name}}\n');
    expect(documents).toEqual([]);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'yaml-syntax', line: 2 }]);
  });

  it('summarises a cascade of YAML errors after the first ones', () => {
    const text = Array.from({ length: 60 }, (_, i) => `k${i}: [unclosed, "x`).join('\n');
    const { diagnostics } = parseManifestFile('cascade.yaml', text);
    const errors = diagnostics.filter((d) => d.code === 'yaml-syntax');
    expect(errors.length).toBe(MAX_YAML_ERRORS_PER_FILE + 1);
    expect(errors.at(-1)?.message).toMatch(/more YAML errors/);
  });
});
