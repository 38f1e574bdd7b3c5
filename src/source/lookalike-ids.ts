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
 * may legitimately look alike are left out (`manifest.idsMayLookAlike`: a dependency's id holds an
 * API path, and paths differ in case legitimately).
 */
import type { KindModel } from '../core/kind-contract.js';
import type { Change, DesiredObject, Diagnostic } from '../core/model.js';
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

/** Every character outside printable ASCII as its code point (`r\u{435}po-b`), so two look-alikes read apart. */
const revealed = (s: string): string =>
  Array.from(s)
    .map((c) => (/^[\x20-\x7e]$/.test(c) ? c : `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`))
    .join('');

const where = (o: DesiredObject): string => `${o.source.file}:${o.source.line}`;

/** One warning per id that looks like an earlier one of the same kind (first declaration kept as the reference). */
export const lookalikeIdWarnings = async (
  objects: readonly DesiredObject[],
  kinds: readonly (Pick<KindModel, 'kind'> & { manifest: Pick<KindModel['manifest'], 'idsMayLookAlike'> })[],
): Promise<Diagnostic[]> => {
  const compared = new Set(kinds.filter((k) => k.manifest.idsMayLookAlike !== true).map((k) => k.kind));
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
    const shown = caseOnly ? (id: string) => id : revealed;
    const how = caseOnly
      ? 'differ only in case (the API may treat them as one)'
      : 'look alike (Unicode look-alike or invisible characters): a reader cannot tell them apart';
    diagnostics.push({
      severity: 'warning',
      code: caseOnly ? 'case-only-id' : 'lookalike-id',
      // Look-alikes with every character outside printable ASCII as its code point: printed
      // as they are, the two ids of the message would read the same.
      message: `${object.kind} \`${shown(object.id)}\` (${where(object)}) and \`${shown(earlier.id)}\` (${where(earlier)}) ${how}; rename one`,
      file: object.source.file,
      line: object.source.line,
      column: object.source.column,
      kind: object.kind,
      id: object.id,
    });
  }
  return diagnostics;
};


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

/** `; U+2011` for each distinct character outside printable ASCII, so that two look-alikes read apart. */
const codePoints = (id: string): string => {
  const odd = [...new Set(Array.from(id).filter((ch) => !/^[\x20-\x7e]$/.test(ch)))];
  return odd.map((ch) => `; U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`).join('');
};

/**
 * Changes of one plan whose ids look alike, at least one of them a write, not both declared in
 * the manifests (those are warned of when they load): creating `payments‑api` (U+2011) while
 * archiving `payments-api` reads as a file move. One `lookalike-change` warning per write of such
 * a pair, with its kind and id, so that every renderer shows it beside that change.
 */
export const lookalikeChangeWarnings = async (
  changes: readonly Pick<Change, 'kind' | 'id' | 'action'>[],
  declared: ReadonlySet<string>,
  kinds: readonly (Pick<KindModel, 'kind'> & { manifest: Pick<KindModel['manifest'], 'idsMayLookAlike'> })[],
): Promise<Diagnostic[]> => {
  const compared = new Set(kinds.filter((k) => k.manifest.idsMayLookAlike !== true).map((k) => k.kind));
  const candidates = changes.filter((c) => compared.has(c.kind));
  if (!candidates.some((c) => c.action !== 'noop') || candidates.length < 2) return [];
  const map = await loadConfusables();
  const bySkeleton = new Map<string, Pick<Change, 'kind' | 'id' | 'action'>[]>();
  for (const c of candidates) {
    const key = `${c.kind}\u0000${skeletonOf(c.id, map)}`;
    bySkeleton.set(key, [...(bySkeleton.get(key) ?? []), c]);
  }
  const diagnostics: Diagnostic[] = [];
  for (const group of bySkeleton.values()) {
    for (const c of group) {
      if (c.action === 'noop') continue;
      const twins = group.filter(
        (o) => o.id !== c.id && !(declared.has(`${c.kind}/${c.id}`) && declared.has(`${o.kind}/${o.id}`)),
      );
      if (twins.length === 0) continue;
      const others = twins.map(
        (o) => `\`${o.id}\` (${o.action === 'noop' ? 'unchanged' : o.action}${codePoints(o.id)})`,
      );
      diagnostics.push({
        severity: 'warning',
        code: 'lookalike-change',
        message: `${c.kind} \`${c.id}\` (${c.action}${codePoints(c.id)}) looks like ${others.join(', ')} in this plan: a reader cannot tell them apart`,
        kind: c.kind,
        id: c.id,
      });
    }
  }
  return diagnostics;
};
