/**
 * Where an exported file's `# yaml-language-server: $schema=…` line points. The project owns no
 * web address, so by default export writes the package's JSON Schemas beside the export, in
 * `SCHEMA_FOLDER` (committed with the manifests, so every checkout's editor validates offline),
 * and each file names its kind's by a relative path. `--schema-base` names a team's own copy
 * instead: an `http(s)` URL (a mirror, a tagged raw URL) used as given, or a folder, named from the
 * working directory as every path of the command line, referred to relatively; then nothing is
 * written there. Either way the reference is a URI reference with no space, quote or control
 * character (each path segment percent-encoded), so it cannot end the comment line or be read as
 * YAML. Pure.
 */
import { posix, relative, resolve, sep } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { KindName } from '../core/model.js';
import { schemaFileName } from '../schemas/json-schemas.js';

/**
 * The folder of the output directory the schemas are written to. Not `.cortex-sync/`: that one
 * holds a run's local files (plan logs) and is git-ignored, so schemas there would be missing
 * from every other checkout. Not under `.cortex/`: a `.json` file there is an error of the layout.
 */
const SCHEMA_FOLDER = '.cortex-sync-schemas';

/** Where the schema lines point: beside the export (default), a URL, or a folder relative to `--out`. */
export type SchemaBase = { beside: true } | { url: string } | { folder: string };

export const SCHEMAS_BESIDE: SchemaBase = { beside: true };

/** A control character (line breaks included), or a space of another kind than ` `. */
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}\u2028\u2029\u0085]/u;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
/** One-letter "schemes" are Windows drive letters: a path. */
const DRIVE = /^[a-z]:[\\/]/i;

/** The entrypoint escapes what it prints (`printable`): the value goes in as given. */
const refused = (value: string, why: string): ConfigError =>
  new ConfigError(`--schema-base \`${value}\` ${why}; nothing was read or written`);

/** A URL given as the base: http(s), no credentials, query or fragment (the file name is appended). */
const parseUrl = (value: string): SchemaBase => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refused(value, 'is not a URL');
  }
  // Never echo credentials back, not even in the error.
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      '--schema-base holds credentials (user:password@): a URL written into every exported file must not; nothing was read or written',
    );
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refused(value, `is a ${url.protocol} URL: give an http(s) URL, or a folder path`);
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#'))
    throw refused(value, 'has a query or fragment (? or #): the schema file name is appended to it');
  const href = url.href.endsWith('/') ? url.href : `${url.href}/`;
  return { url: href };
};

/**
 * The `--schema-base` value, checked; a folder is resolved from `cwd` and kept relative to
 * `outDir`. Throws a `ConfigError` naming the flag for a value that cannot be written into a
 * comment line or is not a place an editor can read.
 */
export const parseSchemaBase = (value: string | undefined, cwd: string, outDir: string): SchemaBase => {
  if (value === undefined) return SCHEMAS_BESIDE;
  if (value.trim() === '') throw refused(value, 'is empty: give a URL or a folder');
  if (CONTROL.test(value))
    throw refused(value, 'holds a line break or control character, which would end the schema comment');
  if (SCHEME.test(value) && !DRIVE.test(value)) return parseUrl(value);
  const folder = relative(outDir, resolve(cwd, value)).split(sep).join('/');
  return { folder: folder === '' ? '.' : folder };
};

/** A relative path as a URI reference: each segment percent-encoded (`..` and `.` stay). */
const encodePath = (path: string): string =>
  path
    .split('/')
    .map((segment) => (segment === '..' || segment === '.' ? segment : encodeURIComponent(segment)))
    .join('/');

/** The folder of schemas, relative to the output directory, for `base` (undefined for a URL). */
const folderOf = (base: SchemaBase): string | undefined =>
  'beside' in base ? SCHEMA_FOLDER : 'folder' in base ? base.folder : undefined;

/** What the schema line of `filePath` (relative to the output directory, `/`) names for `kind`. */
export const schemaReference = (base: SchemaBase, kind: KindName, filePath: string): string => {
  const name = schemaFileName(kind);
  if ('url' in base) return `${base.url}${encodeURIComponent(name)}`;
  const target = posix.join(folderOf(base) ?? SCHEMA_FOLDER, name);
  const ref = posix.relative(posix.dirname(posix.normalize(filePath)), target);
  return encodePath(ref);
};

/**
 * The schema files export writes (none unless the base is beside): every kind's, so that files
 * exported earlier, of kinds not exported now, point at this version's schemas too.
 */
export const schemaFilesToWrite = (
  base: SchemaBase,
  schemas: ReadonlyMap<KindName, string>,
): { path: string; text: string }[] =>
  'beside' in base
    ? [...schemas].map(([kind, text]) => ({ path: `${SCHEMA_FOLDER}/${schemaFileName(kind)}`, text }))
    : [];
