/**
 * One folder per source inside the cache directory, named after what it follows: a readable slug
 * and a hash of the repository URL (without credentials, query or fragment), the branch and the
 * path, or of the local directory. Two watchers of different sources never share a checkout;
 * two of the same source meet at the same folder, where the lock (`source-lock.ts`) stops the
 * second one.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';

/** `https://user:token@host/a.git?x#y` → `https://host/a.git`; scheme and host in lower case. */
export const credentialFreeUrl = (url: string): string => {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)(?:[^@/?#]*@)?([^/?#]*)([^?#]*)/i.exec(url.trim());
  if (match) return `${(match[1] ?? '').toLowerCase()}${(match[2] ?? '').toLowerCase()}${match[3] ?? ''}`;
  // scp-like `user@host:path` (SSH): the user is an account name, not a secret; kept as given.
  return url.trim().replace(/[?#].*$/, '');
};

const slugOf = (text: string, max: number): string =>
  text
    .toLowerCase()
    .replace(/\.git$/, '')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .replace(/-{2,}/g, '-')
    .slice(0, max)
    .replace(/[-.]+$/, '') || 'source';

const hashOf = (parts: readonly string[]): string =>
  createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 12);

/** The manifest root inside the repository as one spelling: `./catalog/` and `catalog` are the same. */
const normalPath = (path: string | undefined): string => {
  if (path === undefined || path.trim() === '') return '';
  const normal = posix.normalize(path.trim().replace(/\\/g, '/')).replace(/^(\.\/)+|\/+$/g, '');
  return normal === '.' ? '' : normal;
};

/** The folder name of a git source (`github.com-acme-catalog-main-3f2a9c0d1e4b`). */
export const gitSourceFolder = (source: { url: string; branch?: string; path?: string }): string => {
  // `…/catalog`, `…/catalog/` and `…/catalog.git` name one repository, so one folder.
  const url = credentialFreeUrl(source.url)
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const path = normalPath(source.path);
  const where = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/^[^@/]*@/, '');
  const readable = [
    slugOf(where, 48),
    slugOf(source.branch ?? 'default-branch', 24),
    ...(path ? [slugOf(path, 24)] : []),
  ];
  return `${readable.join('-')}-${hashOf(['git', url, source.branch ?? '', path])}`;
};

/** The folder name of a local directory source, from its resolved path (`dir-catalog-5b1e…`). */
export const dirSourceFolder = (realDir: string): string => {
  const last = realDir.split(/[\\/]/).filter(Boolean).slice(-2).join('-');
  return `dir-${slugOf(last, 48)}-${hashOf(['dir', realDir])}`;
};
