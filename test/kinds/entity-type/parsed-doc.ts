/**
 * Test support for the entity-type, dependency and catalog-page kinds: a `ParsedDocument` from
 * YAML text, located with the `yaml` package's own node ranges.
 */
import { isCollection, isNode, LineCounter, parseDocument } from 'yaml';
import type { ParsedDocument } from '../../../src/core/model.js';

export const parsedDoc = (text: string, file = '.cortex/test.yaml'): ParsedDocument => {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  if (doc.errors.length > 0) throw new Error(doc.errors[0]?.message);
  const position = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  return {
    file,
    index: 0,
    ...position(doc.contents?.range?.[0] ?? 0),
    value: doc.toJS(),
    locate(path) {
      let node: unknown = doc.contents;
      let found = node;
      for (const segment of path) {
        if (!isCollection(node)) break;
        const next = node.get(segment as string | number, true);
        if (!isNode(next)) break;
        node = next;
        found = next;
      }
      return position(isNode(found) ? (found.range?.[0] ?? 0) : 0);
    },
  };
};
