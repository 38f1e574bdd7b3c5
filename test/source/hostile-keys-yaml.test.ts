/**
 * YAML a pull request can write that JavaScript objects read differently from what the file says:
 * a key named `__proto__` (an object's prototype once assigned, so what it holds vanishes or
 * turns into settings nobody wrote as keys), and the YAML 1.1 tags (`!!timestamp`, `!!binary`,
 * `!!set`, `!!omap`) that become values which are not JSON.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readConfigFile } from '../../src/engine/config-file.js';
import { parseManifestFile } from '../../src/source/yaml.js';
import { describeValue } from '../../src/source/zod-diagnostics.js';
import { removeDir, tempDir, writeFiles } from '../engine/helpers.js';

const lines = (...rows: string[]): string => `${rows.join('\n')}\n`;

describe('a key named __proto__', () => {
  const descriptor = (key: string) =>
    lines(
      'openapi: 3.0.1',
      'info:',
      '  title: Payments',
      '  x-cortex-tag: payments',
      `  ${key}:`,
      '    x-cortex-groups: [hidden]',
    );

  for (const [what, key] of [
    ['plain', '__proto__'],
    ['quoted', '"__proto__"'],
    ['written with escapes', '"\\x5f_proto\\u005f_"'],
  ] as const) {
    it(`(${what}) is an error at its line, and the document is not read`, () => {
      const { documents, diagnostics } = parseManifestFile('cortex.yaml', descriptor(key));
      expect(documents).toEqual([]);
      expect(diagnostics).toEqual([
        expect.objectContaining({
          severity: 'error',
          file: 'cortex.yaml',
          line: 5,
          column: 3,
          field: 'info.__proto__',
        }),
      ]);
      expect(diagnostics[0]?.message).toMatch(/^info\.__proto__: a key named `__proto__` is not read/);
    });
  }

  it('in a list, in a flow mapping and in a second document: each is named, the clean document is kept', () => {
    const text = lines('a: [{__proto__: 1}]', '---', 'b: {c: 1}', '---', 'd:', '  - e: {__proto__: {f: 1}}');
    const { documents, diagnostics } = parseManifestFile('.cortex/catalog/x.yaml', text);
    expect(documents.map((d) => d.value)).toEqual([{ b: { c: 1 } }]);
    expect(diagnostics.map((d) => [d.line, d.field])).toEqual([
      [1, 'a[0].__proto__'],
      [6, 'd[0].e.__proto__'],
    ]);
  });

  it('a value or a key that only contains the word is an ordinary string', () => {
    const { documents, diagnostics } = parseManifestFile('cortex.yaml', lines('__proto__x: "__proto__"', 'y: a\\b'));
    expect(diagnostics).toEqual([]);
    expect(documents[0]?.value).toEqual({ __proto__x: '__proto__', y: 'a\\b' });
  });

  describe('in cortex-sync.yaml', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await tempDir();
    });
    afterEach(async () => {
      await removeDir(dir);
    });

    it('cannot set prune and pruneEntities without naming them as keys: an error, no setting applied', async () => {
      await writeFiles(dir, {
        'cortex-sync.yaml': lines('sourceId: mine', '__proto__: {prune: true, pruneEntities: delete}'),
      });
      const read = await readConfigFile(dir);
      expect(read.config).toEqual({});
      expect(read.diagnostics).toEqual([
        expect.objectContaining({ severity: 'error', file: 'cortex-sync.yaml', line: 2, field: '__proto__' }),
      ]);
    });
  });
});

describe('values of YAML 1.1 tags are named for what they are', () => {
  it('a timestamp, binary data, a set and an ordered map are not called "a mapping"', () => {
    const text = lines(
      'when: !!timestamp 2020-01-01',
      'bin: !!binary aGVsbG8=',
      'set: !!set {a, b}',
      'pairs: !!omap [{a: 1}]',
    );
    const value = parseManifestFile('x.yaml', text).documents[0]?.value as Record<string, unknown>;
    expect(describeValue(value.when)).toBe('a `!!timestamp` value');
    expect(describeValue(value.bin)).toBe('binary data (`!!binary`)');
    expect(describeValue(value.set)).toBe('a `!!set`');
    expect(describeValue(value.pairs)).toBe('an ordered map (`!!omap`)');
  });
});
