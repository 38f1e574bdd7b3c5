/**
 * File names for exported manifests, one per object, derived from its identity (a tag, a slug, a
 * name). Pure.
 *
 * An identity that is already a plain lower-case name (`payments-api`, `ledger.db`) is the file
 * name as it is. Anything else (`@acme/web.app`, `Payments readiness`, `CON`) becomes a readable
 * slug plus `~` and a hash of the exact identity: safe on every file system (no `/`, `@`, spaces,
 * reserved names, or names differing only in case), and never equal to another identity's name,
 * since a plain name never holds `~`. The identity itself is inside the file.
 */
import { createHash } from 'node:crypto';

const PLAIN_NAME = /^[a-z0-9][a-z0-9._-]*$/;
const MAX_SLUG = 80;
/** Names Windows refuses as files, whatever the extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/;

const isPlain = (id: string): boolean =>
  id.length <= MAX_SLUG && PLAIN_NAME.test(id) && !id.endsWith('.') && !RESERVED.test(id);

const slugOf = (id: string): string => {
  const slug = id
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/[-._]+$/g, '');
  return slug === '' ? 'object' : slug;
};

/** The file's base name (without extension) for an object identified by `id`. */
export const manifestBaseName = (id: string): string => {
  if (isPlain(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 10);
  return `${slugOf(id)}~${hash}`;
};

/** `folder/<base name>.yaml` (`folder` relative to the manifest root, `/` separators, no trailing `/`). */
export const manifestPath = (folder: string, id: string): string => `${folder}/${manifestBaseName(id)}.yaml`;
