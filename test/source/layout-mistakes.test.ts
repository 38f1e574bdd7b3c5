/**
 * Plausible layout mistakes are said, naming what was looked for: a descriptor in another case,
 * `.json` where the layout reads YAML, a `cortex/` folder without the dot, a root with nothing in
 * it; and tags a reader cannot tell apart (case only, Unicode look-alikes) are warned.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { loadManifests } from '../../src/source/load.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-layout-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const put = async (rel: string, text: string): Promise<void> => {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
};
const descriptor = (tag: string): string =>
  ['openapi: 3.0.1', 'info:', `  title: T`, `  x-cortex-tag: ${JSON.stringify(tag)}`, ''].join('\n');

const load = () => loadManifests(root, KIND_HANDLERS);
const summary = async () => (await load()).diagnostics.map((d) => [d.severity, d.code, d.file]);

describe('layout mistakes', () => {
  it('Cortex.yaml and CORTEX.YML are errors: descriptors are named in lower case', async () => {
    await put('a/Cortex.yaml', descriptor('a'));
    await put('b/CORTEX.YML', descriptor('b'));
    await put('c/cortex.yaml', descriptor('c'));
    expect(await summary()).toEqual([
      ['error', 'unowned-manifest', 'a/Cortex.yaml'],
      ['error', 'unowned-manifest', 'b/CORTEX.YML'],
    ]);
    expect((await load()).diagnostics[0]?.message).toMatch(/named cortex\.yaml or cortex\.yml, in lower case/);
  });

  it('.json manifests where the layout reads YAML are errors; package.json is nobody’s business', async () => {
    await put('svc/cortex.json', '{}');
    await put('.cortex/catalog/ledger.json', '{}');
    await put('web/package.json', '{}');
    await put('c/cortex.yaml', descriptor('c'));
    expect(await summary()).toEqual([
      ['error', 'unowned-manifest', '.cortex/catalog/ledger.json'],
      ['error', 'unowned-manifest', 'svc/cortex.json'],
    ]);
    const messages = (await load()).diagnostics.map((d) => d.message).join('\n');
    expect(messages).toMatch(/no kind reads \.json there: manifests in \.cortex\/catalog\/.* are YAML/);
  });

  it('a cortex/ folder without the dot is a warning naming the folder meant', async () => {
    await put('cortex/catalog/a.yaml', descriptor('a'));
    await put('cortex/catalog/b.yaml', descriptor('b'));
    await put('c/cortex.yaml', descriptor('c'));
    const { diagnostics } = await load();
    expect(diagnostics).toMatchObject([{ severity: 'warning', code: 'unowned-manifest', file: 'cortex/catalog' }]);
    expect(diagnostics[0]?.message).toBe(
      "cortex/catalog/ holds 2 YAML files that are not read: the layout's folders are under .cortex/, with a dot; did you mean .cortex/catalog/?",
    );
  });

  it('an empty root is an error naming where it looked and what for (a warning with allowEmpty)', async () => {
    const { diagnostics } = await load();
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'no-manifests' }]);
    expect(diagnostics[0]?.message).toContain('if the repository is empty on purpose, pass --allow-empty');
    const allowed = await loadManifests(root, KIND_HANDLERS, { allowEmpty: true });
    expect(allowed.diagnostics).toMatchObject([{ severity: 'warning', code: 'no-manifests' }]);
    expect(diagnostics[0]?.message).toContain(
      `no manifests found in ${root}: looked for cortex.yaml / cortex.yml files`,
    );
    expect(diagnostics[0]?.message).toContain('.cortex/catalog/');
  });

  it('a root holding only cortex-sync.yaml does not call the settings file a YAML file no kind reads', async () => {
    await put('cortex-sync.yaml', 'sourceId: mine\n');
    await put('docs/notes.yaml', 'a: 1\n');
    const { diagnostics } = await load();
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'no-manifests' }]);
    expect(diagnostics[0]?.message).toContain('1 YAML file no kind reads: docs/notes.yaml.');
    expect(diagnostics[0]?.message).not.toContain('cortex-sync.yaml');
  });

  it('a cortex-sync.yaml below the root is not the settings file: it is named', async () => {
    await put('team/cortex-sync.yaml', 'sourceId: mine\n');
    const { diagnostics } = await load();
    expect(diagnostics[0]?.message).toContain('1 YAML file no kind reads: team/cortex-sync.yaml.');
  });

  it('a .cortex/ folder below the root says that only the root’s is read, not "did you mean" the folder it is in', async () => {
    await put('c/cortex.yaml', descriptor('c'));
    await put('teams/a/.cortex/catalog/ledger.yaml', descriptor('ledger'));
    const { diagnostics } = await load();
    expect(diagnostics).toMatchObject([
      { severity: 'error', code: 'unowned-manifest', file: 'teams/a/.cortex/catalog/ledger.yaml' },
    ]);
    expect(diagnostics[0]?.message).toBe(
      'teams/a/.cortex/catalog/ledger.yaml is in a .cortex/ folder below the manifest root, and only the root’s .cortex/ is read (is teams/a the manifest root, for --dir?) (nothing is applied or pruned until it is moved or removed)',
    );
  });

  it('a folder that cannot be read is the error; "no manifests found" is not claimed beside it', async () => {
    await put('cortex-sync.yaml', 'sourceId: mine\n');
    await put('docs/notes.yaml', 'a: 1\n');
    await symlink(path.join(root, 'loop'), path.join(root, 'loop'));
    expect(await summary()).toEqual([['error', 'unreadable-manifest', 'loop']]);
  });
});

describe('tags a reader cannot tell apart', () => {
  it('case only, and Unicode look-alikes (Cyrillic а, fullwidth letters, a zero-width space) are warnings', async () => {
    await put('a/cortex.yaml', descriptor('payments'));
    await put('b/cortex.yaml', descriptor('Payments'));
    await put('c/cortex.yaml', descriptor('pаypal'));
    await put('d/cortex.yaml', descriptor('paypal'));
    await put('e/cortex.yaml', descriptor('ｌedger'));
    await put('f/cortex.yaml', descriptor('ledger'));
    await put('g/cortex.yaml', descriptor('or\u200bders'));
    await put('h/cortex.yaml', descriptor('orders'));
    await put('i/cortex.yaml', descriptor('billing'));
    const { objects, diagnostics } = await load();
    expect(objects).toHaveLength(9);
    expect(diagnostics.map((d) => [d.severity, d.code, d.file])).toEqual([
      ['warning', 'case-only-id', 'b/cortex.yaml'],
      ['warning', 'lookalike-id', 'd/cortex.yaml'],
      ['warning', 'lookalike-id', 'f/cortex.yaml'],
      ['warning', 'lookalike-id', 'h/cortex.yaml'],
    ]);
    expect(diagnostics[0]?.message).toBe(
      'entity `Payments` (b/cortex.yaml:4) and `payments` (a/cortex.yaml:4) differ only in case (the API may treat them as one); rename one',
    );
    expect(diagnostics[1]?.message).toBe(
      'entity `paypal` (d/cortex.yaml:4) and `p\\u{430}ypal` (c/cortex.yaml:4) look alike (Unicode look-alike or invisible characters): a reader cannot tell them apart; rename one',
    );
    expect(diagnostics[3]?.message).toContain('`or\\u{200b}ders` (g/cortex.yaml:4)');
  });

  it('the same name in two kinds is no look-alike', async () => {
    await put('a/cortex.yaml', descriptor('payments'));
    await put('.cortex/scaffolders/payments.yaml', 'tag: Payments\nname: P\n');
    const { diagnostics } = await load();
    expect(diagnostics.filter((d) => d.code.endsWith('-id'))).toEqual([]);
  });
});
