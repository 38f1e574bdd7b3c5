import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ParsedDocument } from '../../src/core/model.js';
import { entityKind } from '../../src/kinds/entity/index.js';
import type { AnyKindHandler } from '../../src/kinds/types.js';
import { loadManifests } from '../../src/source/load.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'cortex-load-'));
});
afterEach(async () => {
  await chmod(root, 0o755).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

const put = async (rel: string, text: string): Promise<void> => {
  await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
  await writeFile(path.join(root, rel), text);
};

const descriptor = (tag: string, extra: string[] = []): string =>
  ['openapi: 3.0.1', 'info:', `  title: ${tag}`, `  x-cortex-tag: ${tag}`, ...extra, ''].join('\n');

const handlers: readonly AnyKindHandler[] = [entityKind as AnyKindHandler];

describe('loadManifests', () => {
  it('loads entity descriptors from cortex.yaml files and .cortex folders, in file order', async () => {
    await put('svc/payments/cortex.yaml', descriptor('payments'));
    await put('.cortex/catalog/ledger.yaml', descriptor('ledger'));
    await put('.cortex/teams/nested/platform.yml', descriptor('platform', ['  x-cortex-type: team']));
    await put('.cortex/catalog/notes.txt', 'not a manifest');
    await put('docs/other.yaml', 'ignored: true\n');

    const { objects, diagnostics, files } = await loadManifests(root, handlers);
    expect(diagnostics).toEqual([]);
    expect(files).toEqual([
      '.cortex/catalog/ledger.yaml',
      '.cortex/teams/nested/platform.yml',
      'svc/payments/cortex.yaml',
    ]);
    expect(objects.map((o) => [o.kind, o.id, o.source.file, o.source.line])).toEqual([
      ['entity', 'ledger', '.cortex/catalog/ledger.yaml', 4],
      ['entity', 'platform', '.cortex/teams/nested/platform.yml', 4],
      ['entity', 'payments', 'svc/payments/cortex.yaml', 4],
    ]);
  });

  it('reports a missing root as an error diagnostic instead of throwing', async () => {
    const result = await loadManifests(path.join(root, 'missing'), handlers);
    expect(result.objects).toEqual([]);
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'manifest-root' }]);
    expect(result.diagnostics[0]?.message).toContain('does not exist');
  });

  it('reports broken YAML and a descriptor without x-cortex-tag with file and line, and keeps loading the rest', async () => {
    await put('a/cortex.yaml', 'openapi: 3.0.1\ninfo:\n  title: A\n  x-cortex-tag: [unclosed\n');
    await put('b/cortex.yaml', 'openapi: 3.0.1\ninfo:\n  title: B\n');
    await put('c/cortex.yaml', descriptor('c'));
    const { objects, diagnostics } = await loadManifests(root, handlers);
    expect(objects.map((o) => o.id)).toEqual(['c']);
    const errors = diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.file)).toContain('a/cortex.yaml');
    expect(errors.find((d) => d.file === 'a/cortex.yaml')).toMatchObject({ code: 'yaml-syntax', kind: 'entity' });
    expect(errors.find((d) => d.file === 'b/cortex.yaml')).toMatchObject({
      code: 'schema',
      field: 'info.x-cortex-tag',
      line: 2,
      message: 'info.x-cortex-tag: is required',
    });
    for (const error of errors) expect(error.line).toBeGreaterThanOrEqual(1);
  });

  it('reports every problem of a file: three problems, three diagnostics', async () => {
    await put(
      'cortex.yaml',
      descriptor('svc', [
        '  x-cortex-owners:',
        '    - type: team',
        '      name: x',
        '  x-cortex-groups: tier-1',
        '  x-cortex-link:',
        '    - name: Runbook',
        '      type: runbook',
      ]),
    );
    const { diagnostics } = await loadManifests(root, handlers);
    expect(diagnostics.map((d) => [d.line, d.field])).toEqual([
      [6, 'info.x-cortex-owners[0].type'],
      [8, 'info.x-cortex-groups'],
      [10, 'info.x-cortex-link[0].url'],
    ]);
    expect(diagnostics.every((d) => d.severity === 'error' && d.file === 'cortex.yaml' && d.id === 'svc')).toBe(true);
  });

  it('reports a tag declared in two files once, naming both files and lines, and keeps the first', async () => {
    await put('one/cortex.yaml', descriptor('payments'));
    await put('two/cortex.yaml', `# moved\n\n${descriptor('payments')}`);
    const { objects, diagnostics } = await loadManifests(root, handlers);
    expect(objects.map((o) => o.source.file)).toEqual(['one/cortex.yaml']);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      severity: 'error',
      code: 'duplicate-id',
      kind: 'entity',
      id: 'payments',
      file: 'two/cortex.yaml',
      line: 6,
    });
    expect(diagnostics[0]?.message).toContain('one/cortex.yaml:4');
    expect(diagnostics[0]?.message).toContain('two/cortex.yaml:6');
  });

  it('warns about an unknown x-cortex key with its line and still loads the entity', async () => {
    await put('cortex.yaml', descriptor('svc', ['  x-cortex-description: a service']));
    const { objects, diagnostics } = await loadManifests(root, handlers);
    expect(objects.map((o) => o.id)).toEqual(['svc']);
    expect(diagnostics).toMatchObject([
      {
        severity: 'warning',
        code: 'unknown-key',
        file: 'cortex.yaml',
        line: 5,
        column: 3,
        field: 'info.x-cortex-description',
      },
    ]);
    expect(diagnostics[0]?.message).toContain('the API silently drops it');
  });

  it('refuses a typo of a known x-cortex key (within the did-you-mean distance) and loads nothing of its document', async () => {
    await put('cortex.yaml', descriptor('svc', ['  x-cortex-group: [tier-1]']));
    const { objects, diagnostics } = await loadManifests(root, handlers);
    expect(objects).toEqual([]);
    expect(diagnostics).toMatchObject([
      {
        severity: 'error',
        code: 'unknown-key',
        file: 'cortex.yaml',
        line: 5,
        column: 3,
        field: 'info.x-cortex-group',
        kind: 'entity',
        id: 'svc',
      },
    ]);
    expect(diagnostics[0]?.message).toContain('did you mean `x-cortex-groups`?');
  });

  it('rejects files over the configured size limit, naming the file', async () => {
    await put('big/cortex.yaml', descriptor('big', [`  description: ${'x'.repeat(5000)}`]));
    await put('small/cortex.yaml', descriptor('small'));
    const { objects, diagnostics } = await loadManifests(root, handlers, { limits: { maxFileBytes: 4096 } });
    expect(objects.map((o) => o.id)).toEqual(['small']);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'file-too-large', file: 'big/cortex.yaml' }]);
    expect(diagnostics[0]?.message).toMatch(/big\/cortex\.yaml is 5,\d{3} bytes, over the 4 KiB limit/);
  });

  it('reports a file that is not UTF-8 text', async () => {
    await mkdir(path.join(root, 'bin'), { recursive: true });
    await writeFile(path.join(root, 'bin/cortex.yaml'), Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]));
    const { diagnostics } = await loadManifests(root, handlers);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'encoding', file: 'bin/cortex.yaml' }]);
  });

  it('routes each file to the kind that owns it, and refuses a file two kinds claim', async () => {
    const seen: string[] = [];
    const other: AnyKindHandler = {
      ...(entityKind as AnyKindHandler),
      kind: 'entity-type',
      title: 'entity type',
      layout: { ownsFile: (rel) => rel.startsWith('.cortex/entity-types/') || rel === 'both/cortex.yaml' },
      manifest: {
        ...(entityKind as AnyKindHandler).manifest,
        parse: (doc: ParsedDocument) => {
          seen.push(doc.file);
          return { objects: [], diagnostics: [] };
        },
      },
    };
    await put('.cortex/entity-types/db.yaml', 'type: db\n');
    await put('both/cortex.yaml', descriptor('x'));
    await put('cortex.yaml', descriptor('root'));
    const { objects, diagnostics } = await loadManifests(root, [...handlers, other]);
    expect(seen).toEqual(['.cortex/entity-types/db.yaml']);
    expect(objects.map((o) => o.id)).toEqual(['root']);
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'ambiguous-kind', file: 'both/cortex.yaml' }]);
  });

  it.skipIf(process.getuid?.() === 0)('reports an unreadable folder instead of silently skipping it', async () => {
    await put('locked/cortex.yaml', descriptor('locked'));
    await chmod(path.join(root, 'locked'), 0o000);
    try {
      const { diagnostics } = await loadManifests(root, handlers);
      expect(diagnostics).toMatchObject([{ severity: 'error', code: 'unreadable-manifest', file: 'locked' }]);
    } finally {
      await chmod(path.join(root, 'locked'), 0o755);
    }
  });

  it('makes every empty manifest an error naming the file: 0 bytes, only comments, a lone `---\\n~`', async () => {
    await put('a/cortex.yaml', '');
    await put('b/cortex.yaml', '# nothing yet\n');
    await put('.cortex/catalog/c.yaml', '---\n~');
    await put('d/cortex.yaml', descriptor('kept'));
    const { objects, diagnostics } = await loadManifests(root, handlers);
    expect(objects.map((o) => o.id)).toEqual(['kept']);
    expect(diagnostics.map((d) => [d.severity, d.file])).toEqual([
      ['error', '.cortex/catalog/c.yaml'],
      ['error', 'a/cortex.yaml'],
      ['error', 'b/cortex.yaml'],
    ]);
    expect(diagnostics[0]?.message).toMatch(/declares nothing/);
  });

  it('never reads a symlinked manifest outside the root, so none of its content reaches a message', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'cortex-load-outside-'));
    try {
      const secret = 'sk-live-0123456789abcdefSECRET';
      await writeFile(path.join(outside, 'environ'), `CORTEX_API_KEY=${secret}\u0000HOME=/root\u0000`);
      await mkdir(path.join(root, 'svc'), { recursive: true });
      await symlink(path.join(outside, 'environ'), path.join(root, 'svc/cortex.yaml'));
      const { objects, diagnostics } = await loadManifests(root, handlers);
      expect(objects).toEqual([]);
      expect(diagnostics).toMatchObject([{ severity: 'error', code: 'unreadable-manifest', file: 'svc/cortex.yaml' }]);
      const text = JSON.stringify(diagnostics);
      expect(text).not.toContain('CORTEX_API_KEY');
      for (let i = 0; i + 8 <= secret.length; i++) expect(text).not.toContain(secret.slice(i, i + 8));
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('quotes at most a short excerpt of any value in a message', async () => {
    const long = 'x'.repeat(500);
    await put('a/cortex.yaml', `openapi: 3.0.1\ninfo:\n  title: A\n  x-cortex-tag: a\n${long}: 1\n${long}: 2\n`);
    await put('b/cortex.yaml', `${long}\n`);
    const { diagnostics } = await loadManifests(root, handlers);
    expect(diagnostics.length).toBeGreaterThanOrEqual(2);
    for (const d of diagnostics) expect(d.message).not.toMatch(/x{61}/);
  });

  // No time limit: the number it prints is a measure, and a busy machine may take minutes.
  it('loads 10,000 small files', { timeout: 0 }, async () => {
    const writes: Promise<void>[] = [];
    for (let d = 0; d < 100; d++) {
      for (let f = 0; f < 50; f++) {
        const tag = `svc-${d}-${f}`;
        writes.push(put(`services/group-${d}/${tag}/cortex.yaml`, descriptor(tag, ['  x-cortex-groups: [tier-1]'])));
        writes.push(put(`.cortex/catalog/part-${d}/res-${d}-${f}.yaml`, descriptor(`res-${d}-${f}`)));
      }
    }
    await Promise.all(writes);
    const started = performance.now();
    const { objects, diagnostics, files } = await loadManifests(root, handlers);
    const elapsed = performance.now() - started;
    console.log(`loadManifests: ${files.length} files, ${objects.length} objects in ${elapsed.toFixed(0)} ms`);
    expect(diagnostics).toEqual([]);
    expect(files).toHaveLength(10_000);
    expect(objects).toHaveLength(10_000);
  });
});
