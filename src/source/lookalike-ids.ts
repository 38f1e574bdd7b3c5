/**
 * Ids of one kind that a reader cannot tell apart: `Payments` and `payments` (case only), or
 * `paypal` and `pаypal` with a Cyrillic `а` (Unicode look-alikes). Each pair is a warning naming
 * both declarations: a reviewer who reads the plan sees one name where there are two objects, and
 * the API may treat tags that differ only in case as one.
 *
 * Two ids look alike when they have the same skeleton: invisible formatting characters dropped
 * (zero-width, bidirectional marks: what `printable()` escapes), NFKC, then the Unicode
 * confusables mapping (UTS #39, from the `unhomoglyph` package's copy of Unicode's
 * `confusables.txt`) and lower case, the mapping applied again after lowering. Kinds whose ids
 * may legitimately look alike are left out (`KindModel.idsMayLookAlike`: a dependency's id holds an
 * API path, and paths differ in case legitimately).
 */
import type { KindModel } from '../core/kind-contract.js';
import type { DesiredObject, Diagnostic } from '../core/model.js';
import { isPrintable } from '../core/printable.js';

type Mapper = (s: string) => string;

/** The confusables mapping, loaded on first use (its table is 100 KB). */
let confusables: Promise<Mapper> | undefined;
const loadConfusables = (): Promise<Mapper> => {
  confusables ??= import('unhomoglyph').then((m) => m.default);
  return confusables;
};

const visibleOnly = (s: string): string => (isPrintable(s) ? s : Array.from(s).filter(isPrintable).join(''));

const skeletonOf = (id: string, map: Mapper): string => {
  const once = map(visibleOnly(id).normalize('NFKC').normalize('NFD')).normalize('NFD');
  return map(once.toLowerCase()).normalize('NFD');
};

const where = (o: DesiredObject): string => `${o.source.file}:${o.source.line}`;

/** One warning per id that looks like an earlier one of the same kind (first declaration kept as the reference). */
export const lookalikeIdWarnings = async (
  objects: readonly DesiredObject[],
  kinds: readonly Pick<KindModel, 'kind' | 'idsMayLookAlike'>[],
): Promise<Diagnostic[]> => {
  const compared = new Set(kinds.filter((k) => k.idsMayLookAlike !== true).map((k) => k.kind));
  const candidates = objects.filter((o) => compared.has(o.kind));
  if (candidates.length < 2) return [];
  const map = await loadConfusables();
  const first = new Map<string, DesiredObject>();
  const diagnostics: Diagnostic[] = [];
  for (const object of candidates) {
    const key = `${object.kind}\u0000${skeletonOf(object.id, map)}`;
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, object);
      continue;
    }
    if (earlier.id === object.id) continue;
    const caseOnly = earlier.id.toLowerCase() === object.id.toLowerCase();
    const how = caseOnly
      ? 'differ only in case (the API may treat them as one)'
      : 'look alike (Unicode look-alike or invisible characters): a reader cannot tell them apart';
    diagnostics.push({
      severity: 'warning',
      code: caseOnly ? 'case-only-id' : 'lookalike-id',
      message: `${object.kind} \`${object.id}\` (${where(object)}) and \`${earlier.id}\` (${where(earlier)}) ${how}; rename one`,
      file: object.source.file,
      line: object.source.line,
      column: object.source.column,
      kind: object.kind,
      id: object.id,
    });
  }
  return diagnostics;
};

/** Every character outside printable ASCII as its code point (`r\u{435}po-b`), so two look-alikes read apart. */
const revealed = (s: string): string =>
  Array.from(s)
    .map((c) => (/^[\x20-\x7e]$/.test(c) ? c : `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`))
    .join('');

/** `id` without punctuation, symbols and spaces at its ends (`example-catalog.` reads as `example-catalog`). */
const withoutEndPunctuation = (id: string): string => id.replace(/^[\p{P}\p{S}\p{Z}\s]+|[\p{P}\p{S}\p{Z}\s]+$/gu, '');

/**
 * A warning when `sourceId` has no ownership record yet but looks like a source that has one
 * (`Repo-B` beside `repo-b`, a Cyrillic `е`, or `repo-b.` with a trailing dot): the plan header would print a name a reviewer
 * reads as that other source, while the run makes a new source that manages nothing of it.
 */
export const lookalikeSourceIdWarnings = async (
  sourceId: string,
  recordedSources: Iterable<string>,
): Promise<Diagnostic[]> => {
  const others = [...recordedSources].filter((s) => s !== sourceId);
  if (others.length === 0) return [];
  const map = await loadConfusables();
  const skeleton = skeletonOf(withoutEndPunctuation(sourceId), map);
  const twin = others.sort().find((s) => skeletonOf(withoutEndPunctuation(s), map) === skeleton);
  if (twin === undefined) return [];
  const caseOnly = twin.toLowerCase() === sourceId.toLowerCase();
  const endsOnly = withoutEndPunctuation(twin) === withoutEndPunctuation(sourceId);
  const how = caseOnly
    ? `differs only in case from \`${revealed(twin)}\``
    : endsOnly
      ? `differs only in punctuation or spaces at its ends from \`${revealed(twin)}\``
      : `reads as \`${revealed(twin)}\` (Unicode look-alike, invisible characters or punctuation at its ends)`;
  return [
    {
      severity: 'warning',
      code: 'lookalike-source-id',
      message: `source id \`${revealed(sourceId)}\` is new to this workspace but ${how}, a source that already has an ownership record: this run makes a separate source that manages and removes nothing of \`${revealed(twin)}\`; if that is not meant, fix sourceId in cortex-sync.yaml`,
    },
  ];
};
