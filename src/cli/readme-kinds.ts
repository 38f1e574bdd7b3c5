/**
 * The README's layout table, generated (pure): one row per managed kind of the registry — its
 * name, where its manifests live (`layout.folders`, `layout.elsewhere`), what identifies one
 * object (`layout.identity`), its JSON Schema (`schemas/<kind>.schema.json`, `npm run schemas`) and
 * its readme — written between `<!-- kinds:start -->` and `<!-- kinds:end -->`. `npm run docs:kinds`
 * writes it; a test fails when the committed README differs, so a new kind gets its row from its
 * folder and its registry line alone.
 */
import { isReadOnly } from '../core/kind-contract.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { type AnyRegisteredKind, REGISTERED_KINDS } from '../kinds/registry.js';

export const KINDS_START = '<!-- kinds:start -->';
export const KINDS_END = '<!-- kinds:end -->';

/** A cell's text: `|` and line breaks would end the cell or the row. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const code = (text: string): string => `\`${text}\``;
const link = (path: string): string => `[${path}](${path})`;

/** The managed kinds of the registry, in its order. */
const registeredKinds = (): AnyKindHandler[] =>
  (Object.values(REGISTERED_KINDS) as readonly AnyRegisteredKind[]).filter(
    (kind): kind is AnyKindHandler => !isReadOnly(kind),
  );

const whereOf = (kind: AnyKindHandler): string => {
  const folders = (kind.layout.folders ?? []).map((folder) => code(`.cortex/${folder}/**`)).join(', ');
  const elsewhere = kind.layout.elsewhere;
  if (elsewhere === undefined) return folders || '—';
  return folders ? `${elsewhere}, and ${folders}` : elsewhere;
};

const identityOf = (kind: AnyKindHandler): string => {
  const identity = kind.layout.identity;
  if (identity === undefined || identity.trim() === '') {
    throw new Error(`kind \`${kind.kind}\` does not say what identifies one object (layout.identity)`);
  }
  return identity;
};

const HEADER = ['| kind | where | identity | schema | details |', '|---|---|---|---|---|'];

/** The table for `kinds` (markdown). */
export const kindsTableMarkdown = (kinds: readonly AnyKindHandler[] = registeredKinds()): string =>
  [
    ...HEADER,
    ...kinds.map(
      (kind) =>
        `| ${[
          code(kind.kind),
          whereOf(kind),
          identityOf(kind),
          link(`schemas/${kind.kind}.schema.json`),
          link(`src/kinds/${kind.kind}/readme.md`),
        ]
          .map(cell)
          .join(' | ')} |`,
    ),
  ].join('\n');

/** `readme` with the text between its markers replaced by the table; an error when a marker is missing. */
export const withKindsTable = (readme: string, kinds: readonly AnyKindHandler[] = registeredKinds()): string => {
  const start = readme.indexOf(KINDS_START);
  const end = readme.indexOf(KINDS_END);
  if (start < 0 || end < start)
    throw new Error(`README.md has no ${KINDS_START} … ${KINDS_END} markers for the layout table`);
  return `${readme.slice(0, start + KINDS_START.length)}\n${kindsTableMarkdown(kinds)}\n${readme.slice(end)}`;
};
