/**
 * One manifest document edited to what is live: the kind's export form of the live objects the
 * document declares (`export.toManifestFiles`) is compared with the document path by path, and the
 * fewest of those path edits that make the kind's canonical forms equal (parsed back as `validate`
 * parses it: `manifest.canonical` of the edited manifest = `live.canonical` of the live object) are made in
 * place (`yaml-edit.ts`). What export writes that the manifest never stated (a server default) is
 * left out, since leaving it out still plans nothing. A document no edit set makes equal is
 * refused with the reason, and the file left as it is. Pure.
 */
import { canonicalJson } from '../core/diff.js';
import type { AnyKindModel } from '../core/kind-contract.js';
import type { DesiredObject, JsonValue, LiveObject } from '../core/model.js';
import { parseManifestFile } from '../source/yaml.js';
import { alignedTo, applyPathEdits, EditRefused, type PathEdit, pathEdits } from './yaml-edit.js';

/** A declared object of the document, and what is live of it (none: removed outside git). */
export interface DocumentObject {
  desired: DesiredObject;
  live?: LiveObject;
}

export interface DocumentEditInput {
  /** Relative to the manifest root, `/` separators. */
  file: string;
  text: string;
  /** The document's index in the file (`ParsedDocument.index`). */
  index: number;
  kind: AnyKindModel;
  /** Every object the document declares. */
  objects: readonly DocumentObject[];
  /** The run's time, for the kind's parse. */
  now: number;
}

export type DocumentEdit =
  { ok: true; text: string; reformatted: boolean; edits: number } | { ok: false; reason: string };

/** Edits tried one by one when making the set smaller; beyond, the whole set is kept. */
const MAX_MINIMISED = 60;

/** Does `text` declare, in document `index`, exactly the live values of the objects (and none removed)? */
export const matchesLive = (input: Omit<DocumentEditInput, 'text'>, text: string): boolean => {
  const parsed = parseManifestFile(input.file, text);
  if (parsed.diagnostics.some((d) => d.severity === 'error')) return false;
  const doc = parsed.documents.find((d) => d.index === input.index);
  if (doc === undefined) return false;
  const result = input.kind.manifest.parse(doc, { now: input.now });
  if (result.diagnostics.some((d) => d.severity === 'error')) return false;
  return input.objects.every(({ desired, live }) => {
    const found = result.objects.find((o) => o.id === desired.id);
    if (live === undefined) return found === undefined;
    if (found === undefined) return false;
    return (
      canonicalJson(input.kind.manifest.canonical(found)) === canonicalJson(input.kind.live.canonical(live, found))
    );
  });
};

/** The export form of the document's live objects, or why there is none. */
const targetOf = (input: DocumentEditInput): { document: JsonValue } | { reason: string } => {
  const live = input.objects.flatMap((o) => (o.live ? [o.live] : []));
  const exported = input.kind.export;
  if (exported === undefined) return { reason: `a ${input.kind.title} cannot be written as a manifest` };
  let files;
  try {
    files = exported.toManifestFiles(live);
  } catch (error) {
    return { reason: `its live value cannot be written as a manifest: ${(error as Error).message}` };
  }
  const ids = new Set(live.map((l) => l.id));
  const file = files.find((f) => f.ids.some((id) => ids.has(id)));
  return file === undefined ? { reason: 'its kind wrote no manifest for the live value' } : { document: file.document };
};

/** The edited text, when these edits make the document match; undefined when they do not or cannot. */
const tryEdits = (
  input: DocumentEditInput,
  edits: readonly PathEdit[],
): { text: string; reformatted: boolean } | undefined => {
  try {
    const out = applyPathEdits(input.text, input.index, edits);
    return matchesLive(input, out.text) ? out : undefined;
  } catch (error) {
    if (error instanceof EditRefused) return undefined;
    throw error;
  }
};

/** The document edited in place to the live values (see the module comment). */
export const editDocumentToLive = (input: DocumentEditInput): DocumentEdit => {
  if (input.objects.every((o) => o.live === undefined))
    return { ok: false, reason: 'every object of the document is gone live (the file is removed instead)' };
  const target = targetOf(input);
  if ('reason' in target) return { ok: false, reason: target.reason };
  const doc = parseManifestFile(input.file, input.text).documents.find((d) => d.index === input.index);
  if (doc === undefined) return { ok: false, reason: `the file no longer holds document ${input.index + 1}` };
  // Lists in the manifest's order first (export may sort them otherwise); else export's order.
  let edits = pathEdits(doc.value, alignedTo(doc.value, target.document));
  let best = tryEdits(input, edits);
  if (best === undefined) {
    edits = pathEdits(doc.value, target.document);
    best = tryEdits(input, edits);
  }
  if (best === undefined) {
    try {
      applyPathEdits(input.text, input.index, edits);
    } catch (error) {
      if (error instanceof EditRefused) return { ok: false, reason: error.message };
      throw error;
    }
    return { ok: false, reason: 'its manifest edited to the live value would still plan a change' };
  }
  if (edits.length <= MAX_MINIMISED) {
    for (let i = edits.length - 1; i >= 0; i--) {
      const fewer = [...edits.slice(0, i), ...edits.slice(i + 1)];
      const out = tryEdits(input, fewer);
      if (out !== undefined) {
        edits = fewer;
        best = out;
      }
    }
  }
  return { ok: true, text: best.text, reformatted: best.reformatted, edits: edits.length };
};
