/**
 * What kind of origin a string is (`engine/source-id.ts` makes them), for messages that print two
 * of them side by side: `path:/x/catalog` and `/x/catalog` must never look like one origin.
 * - `path:<folder>`: a manifest root outside any git checkout with a remote;
 * - `<host>/<path>` (`github.com/acme/catalog//teams`): a git repository, from its remote or
 *   GitHub Actions' GITHUB_REPOSITORY (the same for every clone of it);
 * - anything else: an origin the operator named (`CORTEX_SYNC_ORIGIN`).
 */
import { printable } from './printable.js';

type OriginKind = 'folder' | 'repository' | 'named';

const originKind = (origin: string): OriginKind =>
  origin.startsWith('path:')
    ? 'folder'
    : /^[a-z0-9][a-z0-9.-]*(?::\d+)?\/[^/\s]/i.test(origin)
      ? 'repository'
      : 'named';

const KIND_TEXT: Record<OriginKind, string> = {
  folder: 'a local folder with no git remote',
  repository: 'the git repository, from its remote or GITHUB_REPOSITORY',
  named: 'an origin named by CORTEX_SYNC_ORIGIN',
};

/** `` `path:/x/catalog` (a local folder with no git remote) ``: quoted, escaped, its kind said. */
export const describeOrigin = (origin: string): string => `\`${printable(origin)}\` (${KIND_TEXT[originKind(origin)]})`;

/** What to do when a source id is bound to `recorded` and this run comes from `here`. */
export const claimedAdvice = (recorded: string, here: string, sourceId: string): string => {
  const id = `\`${printable(sourceId)}\``;
  const takeover = `pass --allow-takeover once (the Action's input allow-takeover) from ${describeOriginShort(here)}`;
  if (originKind(recorded) === 'folder' && originKind(here) === 'repository')
    return `${id} was first applied from a folder that had no git remote (trying it before pushing?): if this repository is its home, ${takeover}; from then on every clone with the remote and the Action agree`;
  if (originKind(recorded) === 'repository' && originKind(here) === 'folder')
    return `run from a clone of that repository (one with its git remote, so both are one origin), or use a source id of your own`;
  return `use a source id of your own, or, if this origin is now the rightful home of ${id}, ${takeover}`;
};

const describeOriginShort = (origin: string): string => `\`${printable(origin)}\``;
