/**
 * The fast path must be invisible: wherever it accepts a file, it gives exactly what the full
 * parser gives — values, document starts, and the position of every node — and it refuses every
 * file the full parser has something to say about.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { parseManifestFile, parseManifestFileFully } from '../../../src/source/yaml.js';
import { parseFast } from '../../../src/source/yaml-fast.js';
import { CORPUS_DIR, describeWithCorpus } from '../../support/corpus.js';

const CORPUS = CORPUS_DIR ?? '';
const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples');

const yamlFiles = async (dir: string): Promise<string[]> => {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.ya?ml2?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
};

/** Every path to every node of a parsed value. */
const allPaths = (value: unknown, prefix: PropertyKey[] = []): PropertyKey[][] => {
  const paths: PropertyKey[][] = [prefix];
  if (Array.isArray(value)) value.forEach((item, i) => paths.push(...allPaths(item, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) paths.push(...allPaths(item, [...prefix, key]));
  }
  return paths;
};

/** What a parse gives a user, without the `locate` closures. */
const outcome = (parsed: ReturnType<typeof parseManifestFile>) => ({
  diagnostics: parsed.diagnostics,
  documents: parsed.documents.map(({ index, line, column, value }) => ({ index, line, column, value })),
});

const expectSameAsFull = (file: string, text: string): boolean => {
  const fast = parseManifestFile(file, text);
  const full = parseManifestFileFully(file, text);
  if (parseFast(text, 100) === undefined) {
    expect(outcome(fast)).toEqual(outcome(full)); // refused: the full parser's answer is what the user gets
    return false;
  }
  expect(full.diagnostics, `${file}: the full parser has something to say, the fast path must refuse`).toEqual([]);
  expect(fast.diagnostics).toEqual([]);
  expect(fast.documents.map((d) => [d.index, d.line, d.column])).toEqual(
    full.documents.map((d) => [d.index, d.line, d.column]),
  );
  fast.documents.forEach((doc, i) => {
    const twin = full.documents[i];
    expect(doc.value).toEqual(twin?.value);
    // Every path of ordinary files; an even sample of at most 400 in the huge ones.
    const paths = allPaths(doc.value);
    const step = Math.max(1, Math.ceil(paths.length / 400));
    const sample = paths.filter((_, k) => k % step === 0);
    // Compared in one assertion (one `expect` per path made this test take most of a minute).
    const located = (d: typeof doc | undefined, path: PropertyKey[]) => JSON.stringify(d?.locate(path) ?? null);
    const differing = [...sample, ['no-such-key'], ['info', 'no-such-key', 3]]
      .filter((path) => located(doc, path) !== located(twin, path))
      .map((path) => `${file} ${path.join('.')}: fast ${located(doc, path)}, full ${located(twin, path)}`);
    expect(differing).toEqual([]);
  });
  return true;
};

describeWithCorpus('the fast YAML path', () => {
  it('matches the full parser on every corpus and example file, and takes most of them', async () => {
    let fastCount = 0;
    const files = [...(await yamlFiles(CORPUS)), ...(await yamlFiles(EXAMPLES))];
    for (const path of files) {
      const text = await readFile(path, 'utf8');
      if (expectSameAsFull(relative(CORPUS, path), text)) fastCount++;
    }
    expect(files.length).toBeGreaterThan(150);
    expect(fastCount).toBeGreaterThan(files.length * 0.8);
    // A few hundred files parsed twice each: slow on a loaded shared machine, not a speed goal.
  }, 180_000);

  it.each([
    ['several documents', 'a: 1\n---\nb: [1, 2]\n---\n- x\n- {k: "v"}\n'],
    ['quoted keys and values', '"x-cortex-tag": \'quoted\'\n\'k\': "v"\n'],
    [
      'block scalars in a list and a map',
      'items:\n  - |\n    line one\n    line two\n  - >-\n    folded\nd: |+\n  kept\n',
    ],
    ['a leading comment and an explicit start', '# header\n---\ninfo:\n  title: T # trailing\n'],
    ['scalars the core schema resolves', 'd: 2030-12-31\ny: yes\no: 0o14\nh: 0x1F\nn: ~\ne: 1e3\nt: true\n'],
    ['merge keys', 'base: {x: 1}\nuse:\n  <<: {x: 3}\n  y: 2\n'],
    ['deep nesting', 'a:\n  b:\n    - c:\n        - d: [e, {f: g}]\n'],
  ])('agrees with the full parser on %s', (_name, text) => {
    expectSameAsFull('snippet.yaml', text);
  });

  it.each([
    ['a syntax error', 'info: [unclosed\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['an anchor and an alias', 'a: &x 1\nb: *x\n'],
    ['a merge from an alias', 'base: &b {x: 1}\nuse:\n  <<: *b\n'],
    ['a complex key', '{{ name }}: value\n'],
    ['an empty document', '---\n---\na: 1\n'],
    ['only comments', '# nothing here\n'],
    ['an unknown tag', 'a: !custom 1\n'],
  ])('leaves %s to the full parser', (_name, text) => {
    expect(parseFast(text, 100)).toBeUndefined();
    expect(outcome(parseManifestFile('f.yaml', text))).toEqual(outcome(parseManifestFileFully('f.yaml', text)));
  });
});
