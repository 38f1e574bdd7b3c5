/**
 * Every descriptor of the real-world corpus (`shared/corpus/cortex-yaml/`, found by `test/support/corpus.ts`) either loads, or is
 * one of the files the corpus documents as broken (STATS.md "Invalid or broken files", INDEX.tsv
 * notes) and then fails with located errors for the documented reason, never with a crash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Diagnostic } from '../../../../src/core/model.js';
import { entityReferences, parseEntityDocument } from '../../../../src/kinds/entity/parse.js';
import { parseManifestFile } from '../../../../src/source/yaml.js';
import { CORPUS_DIR, describeWithCorpus } from '../../../support/corpus.js';

const CORPUS = CORPUS_DIR ?? '';

/**
 * The deliberately broken files, with the diagnostic that must explain why (code and/or field, and
 * message). Oddities the API accepts (owners with `name` in place of `email`/`channel`, `email: null`,
 * a scalar `x-cortex-service-groups`) load with warnings instead.
 */
interface ExpectedError {
  code?: string;
  field?: string;
  line?: number;
  message?: RegExp;
}
const DOCUMENTED_INVALID: Record<string, { reason: string; expect: ExpectedError }> = {
  'Biraneniang19__attackerkb__cortex.yaml': { reason: 'INVALID YAML', expect: { code: 'yaml-syntax', line: 17 } },
  'BulkActions__test-repo__.cortex__catalog__argo-rollouts.yaml': {
    reason: 'duplicate keys: x-cortex-link',
    expect: { code: 'duplicate-key', message: /x-cortex-link/ },
  },
  'Cimpress__cimpress-cortex__cortex.yml': {
    reason: "template placeholders; tag '$SERVICE_NAME'",
    expect: { field: 'info.x-cortex-tag', message: /template/ },
  },
  'Cortex-Customer-Engineering__workshop-rh__cortex.yaml': {
    reason: 'EMPTY x-cortex-tag',
    expect: { field: 'info.x-cortex-tag' },
  },
  'Cortex-Customer-Engineering__workshop-vt__cortex.yaml': {
    reason: 'EMPTY x-cortex-tag',
    expect: { field: 'info.x-cortex-tag' },
  },
  'JupiterOne__.github__cortex.yaml': {
    reason: 'x-cortex keys at top level, no info block',
    expect: { field: 'info', message: /is required/ },
  },
  'cortexapps__cli__data__run-time__gitops-catalog.tmpl': {
    reason: 'template placeholders',
    expect: { field: 'info.x-cortex-tag', message: /template/ },
  },
  'cortexapps__cli__data__run-time__patch-entity.yaml': {
    reason: 'no title (a PATCH body, not a full descriptor)',
    expect: { field: 'info.title', message: /is required/ },
  },
  'cortexapps__cli__tests__test_catalog-invalid-service.yaml': {
    reason: 'NO x-cortex-tag (x-cortex-bag)',
    expect: { field: 'info.x-cortex-tag', message: /is required/ },
  },
  'cortexapps__solutions__examples__yaml__catalog__resource.yaml': {
    reason: 'no info block (commented out)',
    expect: { field: 'info', message: /is required/ },
  },
  'cortexapps__solutions__examples__yaml__cortex.yaml': {
    reason: "template placeholders; tag '<SERVICE_TAG>'",
    expect: { field: 'info.x-cortex-tag', message: /template/ },
  },
  'cremerica__cookiecutter-hugo__{{cookiecutter.project_slug}}__cortex.yaml': {
    reason: 'INVALID YAML (unrendered template)',
    expect: { code: 'yaml-syntax', line: 3 },
  },
  'kienan__cookiecutter-cortex-plugin__{{cookiecutter.project_name}}__cortex.yml': {
    reason: 'INVALID YAML (unhashable flow-map key)',
    expect: { code: 'yaml-syntax', line: 5 },
  },
  'lukbla__test1__.cortex__catalog__testa.yaml': {
    reason: 'a bare scalar document',
    expect: { code: 'schema', line: 1, message: /must be a mapping/ },
  },
  'maddymanu__cookiecutter-pypackage__{{cookiecutter.project_slug}}__cortex.yaml': {
    reason: 'INVALID YAML ({{ }} values parse as mappings with mapping keys)',
    expect: { code: 'yaml-syntax', line: 15, message: /template/ },
  },
  'voytekgar__test1__cortex.yaml': { reason: 'XXinfo in place of info', expect: { field: 'info' } },
  'voytekgar__test1__cortex.yml': { reason: 'titleX, no title', expect: { field: 'info.title' } },
};

const corpusFiles = (CORPUS_DIR === undefined ? [] : readdirSync(CORPUS)).filter((name) => name !== 'INDEX.tsv').sort();

const load = (name: string) => {
  const text = readFileSync(path.join(CORPUS, name), 'utf8');
  const parsed = parseManifestFile(name, text);
  const results = parsed.documents.map((doc) => parseEntityDocument(doc));
  return {
    text,
    objects: results.flatMap((r) => r.objects),
    diagnostics: [...parsed.diagnostics, ...results.flatMap((r) => r.diagnostics)],
  };
};

/** Line of the first uncommented `x-cortex-tag:` key in the file. */
const tagLine = (text: string): number =>
  text.split('\n').findIndex((line) => /^\s*x-cortex-tag\s*:/.test(line) && !line.trim().startsWith('#')) + 1;

describeWithCorpus('the descriptor corpus', () => {
  it('holds the 150 files the corpus documents, including every documented invalid one', () => {
    expect(corpusFiles).toHaveLength(150);
    for (const name of Object.keys(DOCUMENTED_INVALID)) expect(corpusFiles).toContain(name);
  });

  const valid = corpusFiles.filter((name) => !(name in DOCUMENTED_INVALID));
  it.each(valid)('loads %s', (name) => {
    const { text, objects, diagnostics } = load(name);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(objects).toHaveLength(1);
    const [object] = objects;
    if (!object) return;
    expect(object.source).toEqual({ file: name, line: tagLine(text), column: expect.any(Number) });
    expect(object.id).toBe((object.doc.value as { info: Record<string, unknown> }).info['x-cortex-tag']);
    for (const ref of entityReferences(object)) {
      expect(ref.id).not.toBe('');
      expect(object.doc.locate(ref.path).line).toBeGreaterThan(0);
    }
    for (const warning of diagnostics) expect(warning.line).toBeGreaterThan(0);
  });

  it.each(Object.entries(DOCUMENTED_INVALID))('rejects %s with located errors', (name, { expect: wanted }) => {
    const { objects, diagnostics } = load(name);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(objects).toEqual([]);
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.file).toBe(name);
      expect(error.line).toBeGreaterThanOrEqual(1);
      expect(error.column).toBeGreaterThanOrEqual(1);
    }
    const { message, ...fields } = wanted;
    const match = errors.find(
      (e) =>
        Object.entries(fields).every(([key, value]) => e[key as keyof Diagnostic] === value) &&
        (message === undefined || message.test(e.message)),
    );
    expect(match, `expected an error like ${JSON.stringify(wanted)} in ${JSON.stringify(errors)}`).toBeDefined();
  });
});
