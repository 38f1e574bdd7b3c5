/**
 * `watch --config FILE`: what a source entry may say, and every mistake named by file, line and field.
 */
import { expect, it } from 'vitest';
import { parseSourcesConfig } from '../../src/watch/sources-config.js';

const FILE = 'sources.yaml';
const messages = (text: string) => parseSourcesConfig(FILE, text).diagnostics.map((d) => `${d.line}: ${d.message}`);

it('reads every field a source may set', () => {
  const { sources, diagnostics } = parseSourcesConfig(
    FILE,
    [
      'sources:',
      '  - name: payments',
      '    repo: https://github.com/acme/payments.git',
      '    branch: main',
      '    path: catalog',
      '    sourceId: payments',
      '    interval: 30s',
      '    prune: true',
      '    onDrift: pr',
      '  - name: local',
      '    dir: ./manifests',
      '    interval: 0',
    ].join('\n'),
  );
  expect(diagnostics).toEqual([]);
  expect(sources).toEqual([
    {
      name: 'payments',
      repo: 'https://github.com/acme/payments.git',
      branch: 'main',
      path: 'catalog',
      sourceId: 'payments',
      intervalMs: 30_000,
      prune: true,
      onDrift: 'pr',
      line: 2,
    },
    { name: 'local', dir: './manifests', intervalMs: 0, line: 10 },
  ]);
});

it('refuses what only the operator decides, naming the flag or variable that sets it', () => {
  expect(
    messages(
      ['sources:', '  - name: a', '    dir: x', '    baseUrl: https://evil.example', '    concurrency: 64'].join('\n'),
    ),
  ).toEqual([
    '4: sources[0].baseUrl is not set per source: the operator sets it for every source (--base-url or CORTEX_BASE_URL)',
    '5: sources[0].concurrency is not set per source: the operator sets it for every source (--concurrency or CORTEX_SYNC_CONCURRENCY)',
  ]);
});

it('names the line and field of a bad value, an unknown key, and a missing repo or dir', () => {
  const found = messages(
    [
      'sources:',
      '  - name: a',
      '    repo: https://example.com/a.git',
      '    onDrift: fix',
      '    interval: soon',
      '  - name: b',
      '    brnach: main',
      '    dir: y',
      '  - name: c',
    ].join('\n'),
  ).sort();
  expect(found, found.join('\n')).toHaveLength(4);
  expect(found[0]).toMatch(/^4: sources\[0\]\.onDrift: .*heal.*pr.*report/);
  expect(found[1]).toMatch(/^5: sources\[0\]\.interval: /);
  expect(found[2]).toMatch(/^7: sources\[1\].*brnach/);
  expect(found[3]).toMatch(/^9: sources\[2\]\.repo: give exactly one of `repo` or `dir`/);
});

it('refuses two sources with one name, one source id, or one checkout', () => {
  expect(
    messages(
      [
        'sources:',
        '  - {name: a, repo: "https://e.example/r.git", branch: main, sourceId: s}',
        '  - {name: a, repo: "https://e.example/other.git"}',
        '  - {name: b, repo: "https://e.example/r.git", branch: main, sourceId: s}',
      ].join('\n'),
    ),
  ).toEqual([
    '3: sources[1] has the name `a` as sources[0] (line 2)',
    '4: sources[2] has the source id `s` as sources[0] (line 2)',
    '4: sources[2] has the same repository, branch and path as sources[0] (line 2)',
  ]);
});

it('refuses an empty file, an empty list and a file that is not a mapping', () => {
  expect(messages('')).toEqual(['1: the file is empty: list the `sources:`']);
  expect(messages('sources: []')[0]).toMatch(/^1: sources: /);
  expect(messages('- a')[0]).toMatch(/^1: expected a mapping with `sources:`/);
});
