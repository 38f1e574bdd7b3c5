/**
 * Real repositories validate: every usable file of the real-world `cortex.yaml` corpus, validated
 * as its owners would (`validateManifests` over a repository), is accepted, alone and all in one
 * tree. Usable: the corpus's INDEX.tsv notes do not mark the file as lacking what the API itself
 * requires (invalid YAML, an unrendered template, an empty or missing tag, no `info` block, no
 * title). The share is printed; the goal is 98 %.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkReferences } from '../../src/core/references.js';
import { type Diagnostic, hasErrors } from '../../src/core/model.js';
import { validateManifests } from '../../src/engine/reconcile.js';
import { ownsEntityFile } from '../../src/kinds/entity/files.js';
import { KIND_HANDLERS } from '../../src/kinds/registry.js';
import { CORPUS_DIR, describeWithCorpus } from '../support/corpus.js';

const CORPUS: string | undefined = CORPUS_DIR;
const GOAL = 0.98;
const ctx = { signal: new AbortController().signal };

/** INDEX.tsv notes of files that no API would take as a descriptor (kept in the corpus on purpose). */
const UNUSABLE = /INVALID YAML|template placeholders|EMPTY x-cortex-tag|NO x-cortex-tag|no info block|no title/;

interface CorpusFile {
  /** Name in the corpus folder. */
  name: string;
  /** The repository snapshot the file was taken from (`owner/name@commit`): files of one commit live together. */
  snapshot: string;
  /** Where the file goes in its repository: its own path when that holds descriptors, else under `.cortex/catalog/`. */
  place: string;
}

const usableFiles = async (corpus: string): Promise<CorpusFile[]> => {
  const rows = (await readFile(path.join(corpus, 'INDEX.tsv'), 'utf8')).trim().split('\n').slice(1);
  return rows
    .map((row) => row.split('\t'))
    .filter(([, , , , notes]) => !UNUSABLE.test(notes ?? ''))
    .map(([name = '', repo = '', commit = '', repoPath = '']) => ({
      name,
      snapshot: `${repo}@${commit.slice(0, 8)}`,
      place: ownsEntityFile(repoPath)
        ? repoPath
        : `.cortex/catalog/${path.basename(repoPath).replace(/\.[^.]*$/, '')}.yaml`,
    }));
};

/**
 * Files refused on purpose: a key within the did-you-mean distance of a key Cortex knows is an
 * error (the API would drop it silently). Each is a real typo (`x-cortex-group` is no Cortex key;
 * `x-cortex-groups` is), named with the only error it may get; they are left out of the share.
 */
const TYPO_FILES: ReadonlyMap<string, string> = new Map([['rapid7__pdf-renderer__cortex.yaml', 'info.x-cortex-group']]);
const refusedForTypo = (name: string, errors: readonly Diagnostic[]): boolean =>
  TYPO_FILES.has(name) &&
  errors.length === 1 &&
  errors[0]?.code === 'unknown-key' &&
  errors[0].field === TYPO_FILES.get(name) &&
  /did you mean `x-cortex-groups`/.test(errors[0].message);

const errorsOf = (diagnostics: readonly Diagnostic[]): Diagnostic[] =>
  diagnostics.filter((d) => d.severity === 'error');
const describeErrors = (errors: readonly Diagnostic[]): string =>
  errors.map((e) => `${e.file}:${e.line ?? 0} ${e.message}`).join('; ');
const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;

const temps: string[] = [];
const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cortex-sync-corpus-'));
  temps.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

const copyInto = async (corpus: string, root: string, file: CorpusFile, place: string): Promise<void> => {
  await mkdir(path.dirname(path.join(root, place)), { recursive: true });
  await copyFile(path.join(corpus, file.name), path.join(root, place));
};

const title =
  CORPUS === undefined
    ? 'the real-world cortex.yaml corpus: SKIPPED, the corpus was not found'
    : 'the real-world cortex.yaml corpus';

describeWithCorpus(title, () => {
  const corpus = CORPUS ?? '';

  it(`validates each usable file alone, in its own repository: at least ${percent(GOAL)} accepted`, async () => {
    const all = await usableFiles(corpus);
    expect(all.length).toBeGreaterThan(100);
    const rejected: string[] = [];
    const typos: string[] = [];
    for (const file of all) {
      const root = await tempDir();
      await copyInto(corpus, root, file, file.place);
      const result = await validateManifests(root, ctx);
      const errors = errorsOf(result.diagnostics);
      if (refusedForTypo(file.name, errors)) typos.push(file.name);
      else if (errors.length > 0 || result.objects.length === 0)
        rejected.push(`${file.name}: ${describeErrors(errors)}`);
    }
    expect(typos.sort()).toEqual([...TYPO_FILES.keys()].sort());
    const files = all.filter((file) => !TYPO_FILES.has(file.name));
    const share = (files.length - rejected.length) / files.length;
    console.log(
      `corpus, each file alone: ${files.length - rejected.length}/${files.length} accepted (${percent(share)}); ${typos.length} refused for a typo of a known key`,
    );
    expect(share, `rejected:\n${rejected.join('\n')}`).toBeGreaterThanOrEqual(GOAL);
  });

  /**
   * All files in one tree, one folder per repository snapshot (`.cortex/catalog/` files under the
   * root's `.cortex/catalog/<snapshot>/`; two files of one repository taken from different commits
   * never lived together, so they are two snapshots). A file is accepted when no error names it,
   * except a duplicate tag declared by another snapshot: two repositories claiming one tag is a real
   * conflict in a shared tree, not a defect of either file. Load errors stop `validate` before its reference
   * checks; they are then run over what loaded, so cross-repository references are still judged.
   */
  it(`validates all usable files in one tree: at least ${percent(GOAL)} accepted`, async () => {
    const files = await usableFiles(corpus);
    const root = await tempDir();
    const fileOf = new Map<string, CorpusFile>();
    for (const file of files) {
      const folder = file.snapshot.replace(/[^A-Za-z0-9._-]+/g, '_');
      const place = file.place.startsWith('.cortex/')
        ? file.place.replace(/^\.cortex\/([^/]+)\//, `.cortex/$1/${folder}/`)
        : `${folder}/${file.place}`;
      fileOf.set(place, file);
      await copyInto(corpus, root, file, place);
    }
    const result = await validateManifests(root, ctx);
    const diagnostics = [...result.diagnostics];
    if (hasErrors(diagnostics))
      diagnostics.push(...checkReferences({ desired: result.objects, handlers: KIND_HANDLERS }));

    const declaredBy = new Map<string, Set<string>>();
    for (const d of result.diagnostics.filter((x) => x.code === 'duplicate-id')) {
      for (const match of d.message.matchAll(/([^\s,:]+):\d+/g)) {
        const snapshot = fileOf.get(match[1] ?? '')?.snapshot;
        if (snapshot !== undefined) declaredBy.set(`${d.id}`, (declaredBy.get(`${d.id}`) ?? new Set()).add(snapshot));
      }
    }
    const crossRepositoryDuplicate = (d: Diagnostic): boolean =>
      d.code === 'duplicate-id' && (declaredBy.get(`${d.id}`)?.size ?? 0) > 1;

    const rejected = new Map<string, Diagnostic[]>();
    for (const error of errorsOf(diagnostics)) {
      if (crossRepositoryDuplicate(error) || error.file === undefined) continue;
      rejected.set(error.file, [...(rejected.get(error.file) ?? []), error]);
    }
    for (const [place, errors] of rejected) {
      const name = fileOf.get(place)?.name ?? '';
      if (refusedForTypo(name, errors)) rejected.delete(place);
    }
    const unattributed = errorsOf(diagnostics).filter((e) => e.file === undefined);
    expect(unattributed).toEqual([]);
    const share = (files.length - TYPO_FILES.size - rejected.size) / (files.length - TYPO_FILES.size);
    const clashes = errorsOf(diagnostics).filter(crossRepositoryDuplicate).length;
    console.log(
      `corpus, all in one tree: ${files.length - TYPO_FILES.size - rejected.size}/${files.length - TYPO_FILES.size} accepted (${percent(share)}); ${clashes} tags declared in two repository snapshots`,
    );
    const why = [...rejected.values()].map((errors) => describeErrors(errors)).join('\n');
    expect(share, `rejected:\n${why}`).toBeGreaterThanOrEqual(GOAL);
  });
});
