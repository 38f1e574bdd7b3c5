/**
 * The `# yaml-language-server: $schema=…` line of exported files names no host the project does
 * not own: by default export writes the package's JSON Schemas beside the export
 * (`.cortex-sync-schemas/`) and each file points at its kind's by a relative path, so an editor
 * validates the files offline; `--schema-base` points at a team's own copy instead (a URL, or a
 * folder named relative to the working directory), and then no schema is written.
 */
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir } from '../e2e/harness.js';
import { listFiles, readTree, seedWorkspace } from './helpers.js';

let emulator: Emulator;
const dirs: string[] = [];
const newDir = async (): Promise<string> => {
  const dir = await tempDir('cortex-sync-export-schema-');
  dirs.push(dir);
  return dir;
};
const exportTo = (out: string, extra: string[] = [], cwd = out) =>
  cli(['export', '--out', out, '--source-id', 'repo-a', ...extra], { emulator, cwd });

beforeEach(async () => {
  emulator = await startTestEmulator();
  await seedWorkspace(emulator);
});
afterEach(async () => {
  await emulator.stop();
  for (const dir of dirs.splice(0)) await removeDir(dir);
});

const SCHEMA_LINE = /^# yaml-language-server: \$schema=(\S+)\n/;
const manifestsOf = (tree: Map<string, string>) =>
  [...tree].filter(([file]) => file.endsWith('.yaml') && file !== 'cortex-sync.yaml');
const refOf = (text: string): string => SCHEMA_LINE.exec(text)?.[1] ?? '';

describe('export points editors at schemas it can reach offline', () => {
  it('writes the schemas beside the export, each file refers to its kind’s by a relative path, and it validates the file', async () => {
    const out = await newDir();
    const run = await exportTo(out);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const tree = await readTree(out);
    const manifests = manifestsOf(tree);
    expect(manifests.length).toBeGreaterThan(5);
    for (const [, text] of tree) expect(text).not.toContain('cortex-sync.dev');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [file, text] of manifests) {
      const ref = refOf(text);
      expect(ref, file).toMatch(/^(\.\.\/)+\.cortex-sync-schemas\/[a-z-]+\.schema\.json$/);
      const schemaFile = posix.normalize(posix.join(posix.dirname(file), ref));
      const schema = tree.get(schemaFile);
      expect(schema, `${file} → ${schemaFile}`).toBeDefined();
      const validate = ajv.compile(JSON.parse(schema ?? '{}') as object);
      expect(validate(parse(text)), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // The same schemas as the package's own (`schemas/`), byte for byte.
    for (const file of [...tree.keys()].filter((f) => f.startsWith('.cortex-sync-schemas/'))) {
      const committed = await readFile(join(import.meta.dirname, '..', '..', 'schemas', posix.basename(file)), 'utf8');
      expect(tree.get(file), file).toBe(committed);
    }
    // Plan of the export reads no schema file as a manifest: nothing to create or remove.
    const plan = await cli(['plan', '--dir', out, '--output', 'json'], { emulator, cwd: out });
    expect(plan.stderr).not.toMatch(/error/i);
    expect(plan.code).toBe(0);
  });

  it('a second export into the same folder finds the schemas there already (no --force needed), and replaces a stale one', async () => {
    const out = await newDir();
    expect((await exportTo(out, ['--kinds', 'entity'])).code).toBe(0);
    const entitySchema = join(out, '.cortex-sync-schemas/entity.schema.json');
    await writeFile(entitySchema, '{"stale": true}\n');
    const run = await exportTo(out, ['--kinds', 'scorecard']);
    expect(run.stderr).not.toMatch(/exists? already/);
    expect(run.code).toBe(0);
    expect(await readFile(entitySchema, 'utf8')).toContain('"$schema"');
    expect((await lstat(entitySchema)).isFile()).toBe(true);
    const again = await exportTo(out, ['--kinds', 'catalog-page']);
    expect(again.stderr).not.toMatch(/exists? already/);
    expect(again.code).toBe(0);
    expect(await listFiles(out)).toContain('.cortex-sync-schemas/catalog-page.schema.json');
  });

  it('a schema file that is a symlink is refused, with --force too, and the file it points at is untouched', async () => {
    const out = await newDir();
    const elsewhere = await newDir();
    await writeFile(join(elsewhere, 'victim'), 'keep me\n');
    await mkdir(join(out, '.cortex-sync-schemas'));
    await symlink(join(elsewhere, 'victim'), join(out, '.cortex-sync-schemas/entity.schema.json'));
    const run = await exportTo(out, ['--force']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      '.cortex-sync-schemas/entity.schema.json is a symlink; export never writes through one',
    );
    expect(await readFile(join(elsewhere, 'victim'), 'utf8')).toBe('keep me\n');
    expect((await listFiles(out)).filter((f) => f.startsWith('.cortex/'))).toEqual([]);
  });

  it('a schema folder that is a symlink is refused, nothing written on either side', async () => {
    const out = await newDir();
    const elsewhere = await newDir();
    await symlink(elsewhere, join(out, '.cortex-sync-schemas'));
    const run = await exportTo(out);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.cortex-sync-schemas is a symlink');
    expect(await listFiles(elsewhere)).toEqual([]);
  });
});

describe('--schema-base', () => {
  it('a URL: each file names <url>/<kind>.schema.json and no schema is written', async () => {
    const out = await newDir();
    const base = 'https://raw.githubusercontent.com/acme/cortex-sync/v0.1.0/schemas';
    const run = await exportTo(out, ['--schema-base', `${base}/`]);
    expect(run.code).toBe(0);
    const tree = await readTree(out);
    expect([...tree.keys()].filter((f) => f.startsWith('.cortex-sync-schemas/'))).toEqual([]);
    for (const [file, text] of manifestsOf(tree))
      expect(refOf(text), file).toMatch(new RegExp(`^${base}/[a-z-]+\\.schema\\.json$`));
  });

  it('a folder: named from the working directory, referred to relatively, never written', async () => {
    const repo = await newDir();
    const out = join(repo, 'catalog');
    const run = await exportTo(out, ['--schema-base', 'tools/cortex schemas'], repo);
    expect(run.code).toBe(0);
    const tree = await readTree(out);
    const [file, text] = manifestsOf(tree).find(([f]) => f.startsWith('.cortex/catalog/')) ?? ['', ''];
    expect(refOf(text)).toBe('../../../tools/cortex%20schemas/entity.schema.json');
    expect(await listFiles(repo)).toEqual(expect.not.arrayContaining([expect.stringContaining('schema.json')]));
    expect(dirname(file)).toBe('.cortex/catalog');
  });

  it('a value with a line break, a control character, credentials, a query or another scheme is refused: nothing written', async () => {
    for (const bad of [
      'https://example.com/s\nfoo: bar',
      'https://example.com/s\r',
      'tools/s\u0007',
      'https://user:secret@example.com/schemas',
      'https://example.com/schemas?ref=v1',
      'javascript:alert(1)',
      'file:///etc',
      '',
    ]) {
      const out = await newDir();
      const run = await exportTo(out, ['--schema-base', bad]);
      expect(run.code, JSON.stringify(bad)).not.toBe(0);
      expect(run.stderr, JSON.stringify(bad)).toMatch(/--schema-base/);
      expect(run.stderr).not.toContain('secret');
      // Escaped once where printed: a line break shows as `\n`, never as a new line or `\\n`.
      if (bad.includes('\n')) expect(run.stderr).toContain('`https://example.com/s\\nfoo: bar`');
      expect(await listFiles(out), JSON.stringify(bad)).toEqual([]);
    }
  });

  it('quotes and a YAML-looking tail in a URL stay inside the comment, percent-encoded', async () => {
    const out = await newDir();
    const run = await exportTo(out, ['--schema-base', 'https://example.com/a"b\'c d/#x: 1']);
    // `#` starts a fragment: refused, as a query is.
    expect(run.code).not.toBe(0);
    const ok = await exportTo(out, ['--schema-base', 'https://example.com/a"b c: d']);
    expect(ok.code).toBe(0);
    const [, text] = manifestsOf(await readTree(out))[0] ?? ['', ''];
    expect(text.split('\n')[0]).toMatch(
      /^# yaml-language-server: \$schema=https:\/\/example\.com\/a%22b%20c:%20d\/[a-z-]+\.schema\.json$/,
    );
  });
});
