/**
 * Edits one YAML document of a manifest file at a path, keeping every other byte of the file: the
 * `yaml` library's Document API finds the node (its source range), and only that node's text is
 * replaced. A scalar keeps its quoting; a changed, added or removed key of a block mapping is
 * rewritten on its own lines at its own indentation, the rest of the file untouched. What cannot
 * be edited that way (flow collections, block scalars, a key that opens a list item) is set
 * through the Document and the file rendered again by the library (comments and key order kept;
 * `reformatted` says so). A path that goes through an alias or a merge key is refused: editing it
 * would change every place that shares the value. Pure.
 */
import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type Node,
  type Pair,
  parseAllDocuments,
  Scalar,
  stringify,
} from 'yaml';
import type { JsonValue } from '../core/model.js';

export type YamlPath = readonly (string | number)[];

/** Set the value at a path (adding the key when it is missing), or remove the key or item. */
export type PathEdit = { op: 'set'; path: YamlPath; value: JsonValue } | { op: 'remove'; path: YamlPath };

/** An edit the file cannot take without changing more than the value (an alias, a merge key). */
export class EditRefused extends Error {
  override readonly name = 'EditRefused';
}

const RENDER = {
  version: '1.1',
  lineWidth: 0,
  minContentWidth: 0,
  indentSeq: true,
  aliasDuplicateObjects: false,
} as const;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The edits that turn `current` into `target`, deepest first where both are mappings (or lists of
 * the same length): a key only one side has is removed or added; a list of another length is
 * replaced whole.
 */
export const pathEdits = (current: unknown, target: JsonValue, at: YamlPath = []): PathEdit[] => {
  if (isRecord(current) && isRecord(target)) {
    const edits: PathEdit[] = [];
    for (const key of Object.keys(current)) {
      const next = target[key];
      if (next === undefined) edits.push({ op: 'remove', path: [...at, key] });
      else edits.push(...pathEdits(current[key], next, [...at, key]));
    }
    for (const [key, value] of Object.entries(target)) {
      if (!Object.hasOwn(current, key)) edits.push({ op: 'set', path: [...at, key], value });
    }
    return edits;
  }
  if (Array.isArray(current) && Array.isArray(target) && current.length === target.length) {
    return target.flatMap((item, i) => pathEdits(current[i], item, [...at, i]));
  }
  return sameJson(current, target) ? [] : [{ op: 'set', path: at, value: target }];
};

/** How alike two list items are: equal (infinite), else the scalar fields they share. */
const likeness = (a: unknown, b: unknown): number => {
  if (sameJson(a, b)) return Number.POSITIVE_INFINITY;
  if (!isRecord(a) || !isRecord(b)) return 0;
  return Object.entries(a).filter(([k, v]) => typeof v !== 'object' && b[k] === v).length;
};

/**
 * `target` with each list's items in the order of the items they match in `current` (equal
 * first, else the most scalar fields in common), the rest after: a kind whose export sorts a
 * list differently from the manifest then changes only the items that differ.
 */
export const alignedTo = (current: unknown, target: JsonValue): JsonValue => {
  if (isRecord(current) && isRecord(target))
    return Object.fromEntries(Object.entries(target).map(([k, v]) => [k, alignedTo(current[k], v)]));
  if (!Array.isArray(current) || !Array.isArray(target)) return target;
  const unused = new Set(target.map((_, i) => i));
  const ordered: JsonValue[] = [];
  for (const item of current) {
    let best = -1;
    let score = 0;
    for (const i of unused) {
      const s = likeness(item, target[i]);
      if (s > score) [best, score] = [i, s];
    }
    const match = target[best];
    if (best < 0 || match === undefined) continue;
    unused.delete(best);
    ordered.push(alignedTo(item, match));
  }
  return [...ordered, ...[...unused].flatMap((i) => (target[i] === undefined ? [] : [target[i]]))];
};

const lineStartOf = (text: string, offset: number): number => text.lastIndexOf('\n', offset - 1) + 1;
const lineEndOf = (text: string, offset: number): number => {
  const end = text.indexOf('\n', offset);
  return end === -1 ? text.length : end + 1;
};
const onlySpacesBefore = (text: string, offset: number): boolean =>
  /^[ ]*$/.test(text.slice(lineStartOf(text, offset), offset));

/** The nodes from the document's root down to the parent of the path's last step; refused through an alias or a merge. */
const parentOf = (doc: Document, path: YamlPath): Node | undefined => {
  let node: unknown = doc.contents;
  for (const step of path.slice(0, -1)) {
    if (isAlias(node)) throw new EditRefused('the value is shared through a YAML alias');
    if (isMap(node)) {
      if (node.items.some((p) => isScalar(p.key) && p.key.value === '<<'))
        throw new EditRefused('the mapping takes keys from a YAML merge key (`<<`)');
      node = node.get(step, true);
    } else if (isSeq(node)) node = node.get(step, true);
    else return undefined;
  }
  if (isAlias(node)) throw new EditRefused('the value is shared through a YAML alias');
  if (isMap(node) && node.items.some((p) => isScalar(p.key) && p.key.value === '<<'))
    throw new EditRefused('the mapping takes keys from a YAML merge key (`<<`)');
  return (node ?? undefined) as Node | undefined;
};

/** A scalar's new text in the style it had, or undefined when that style cannot hold it. */
const scalarText = (value: JsonValue, type: Scalar['type'], inFlow: boolean): string | undefined => {
  if (value === null || typeof value === 'number' || typeof value === 'boolean')
    return stringify(value, RENDER).trimEnd();
  if (typeof value !== 'string') return undefined;
  if (value.includes('\n') || type === Scalar.BLOCK_FOLDED || type === Scalar.BLOCK_LITERAL) return undefined;
  if (type === Scalar.QUOTE_DOUBLE) return JSON.stringify(value);
  if (type === Scalar.QUOTE_SINGLE) return `'${value.replaceAll("'", "''")}'`;
  const plain = stringify(value, RENDER).trimEnd();
  if (plain.includes('\n')) return undefined;
  return inFlow && /[,[\]{}]/.test(plain) ? JSON.stringify(value) : plain;
};

const indented = (rendered: string, indent: number): string =>
  rendered
    .trimEnd()
    .split('\n')
    .map((line) => `${' '.repeat(indent)}${line}`)
    .join('\n') + '\n';

/** `key: value` as block YAML, at a column. */
const pairText = (key: string, value: JsonValue, indent: number): string =>
  indented(stringify({ [key]: value }, RENDER), indent);

const rangeOf = (node: unknown): [number, number, number] | undefined =>
  (node as { range?: [number, number, number] | null }).range ?? undefined;

/** The text edit for one path edit, or undefined when only a re-render can make it. */
const spliceFor = (
  text: string,
  doc: Document,
  edit: PathEdit,
): { from: number; to: number; insert: string } | undefined => {
  const parent = edit.path.length === 0 ? undefined : parentOf(doc, edit.path);
  const last = edit.path[edit.path.length - 1];
  const node: unknown = edit.path.length === 0 ? doc.contents : doc.getIn(edit.path, true);
  if (isAlias(node)) throw new EditRefused('the value is shared through a YAML alias');
  const flow = (parent as { flow?: boolean } | undefined)?.flow === true;
  if (edit.op === 'set' && isScalar(node) && !isRecord(edit.value) && !Array.isArray(edit.value)) {
    const range = rangeOf(node);
    const insert = scalarText(edit.value, node.type, flow);
    if (range && insert !== undefined) return { from: range[0], to: range[1], insert };
  }
  if (!isMap(parent) || flow || typeof last !== 'string') return undefined;
  const pair = parent.items.find((p: Pair) => isScalar(p.key) && p.key.value === last);
  if (pair !== undefined) {
    const keyRange = rangeOf(pair.key);
    const valueRange = rangeOf(pair.value) ?? keyRange;
    if (!keyRange || !valueRange || !onlySpacesBefore(text, keyRange[0])) return undefined;
    const from = lineStartOf(text, keyRange[0]);
    const to = lineEndOf(text, Math.max(valueRange[1] - 1, keyRange[1]));
    const indent = keyRange[0] - from;
    return { from, to, insert: edit.op === 'remove' ? '' : pairText(last, edit.value, indent) };
  }
  if (edit.op === 'remove') return { from: 0, to: 0, insert: '' };
  const lastPair = parent.items[parent.items.length - 1];
  const first = parent.items[0];
  const firstKey = first && isPair(first) ? rangeOf(first.key) : undefined;
  const lastEnd = lastPair ? (rangeOf(lastPair.value) ?? rangeOf(lastPair.key)) : undefined;
  if (!firstKey || !lastEnd) return undefined;
  const at = lineEndOf(text, lastEnd[1] - 1);
  const indent = firstKey[0] - lineStartOf(text, firstKey[0]);
  return {
    from: at,
    to: at,
    insert: `${at > 0 && text[at - 1] !== '\n' ? '\n' : ''}${pairText(last, edit.value, indent)}`,
  };
};

/** The file with the document at `index` changed by the Document API and rendered again. */
const rendered = (docs: Document[], index: number, edit: PathEdit): string => {
  const doc = docs[index];
  if (!doc) throw new EditRefused(`the file has no document ${index}`);
  if (edit.op === 'set') {
    if (edit.path.length === 0) doc.contents = doc.createNode(edit.value);
    else doc.setIn(edit.path, doc.createNode(edit.value));
  } else doc.deleteIn(edit.path);
  return docs.map((d) => d.toString(RENDER)).join('');
};

/** The file after one edit of its document `index`, and whether the file had to be rendered again. */
export const applyPathEdit = (text: string, index: number, edit: PathEdit): { text: string; reformatted: boolean } => {
  const docs = parseAllDocuments(text, { version: '1.1', merge: true }) as Document[];
  if (!Array.isArray(docs)) throw new EditRefused('the file is empty');
  const doc = docs[index];
  if (!doc) throw new EditRefused(`the file has no document ${index}`);
  if (doc.errors.length > 0) throw new EditRefused(`the file does not parse: ${doc.errors[0]?.message ?? ''}`);
  const splice = spliceFor(text, doc, edit);
  if (splice) return { text: text.slice(0, splice.from) + splice.insert + text.slice(splice.to), reformatted: false };
  return { text: rendered(docs, index, edit), reformatted: true };
};

/** The file after every edit in turn. */
export const applyPathEdits = (
  text: string,
  index: number,
  edits: readonly PathEdit[],
): { text: string; reformatted: boolean } => {
  let out = { text, reformatted: false };
  for (const edit of edits) {
    const next = applyPathEdit(out.text, index, edit);
    out = { text: next.text, reformatted: out.reformatted || next.reformatted };
  }
  return out;
};
