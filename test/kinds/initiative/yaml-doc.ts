/**
 * Test helper: one YAML text as a `ParsedDocument` with real positions (what `src/source/` hands
 * to a kind's `parse`), built with the `yaml` library directly.
 */
import { isMap, isNode, isScalar, LineCounter, parseDocument } from 'yaml';
import type { ParsedDocument } from '../../../src/core/model.js';

export const yamlDoc = (text: string, file = '.cortex/test.yaml'): ParsedDocument => {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('; '));
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
      for (let depth = path.length; depth >= 0; depth--) {
        const prefix = path.slice(0, depth);
        const parent = depth > 0 ? doc.getIn(prefix.slice(0, -1), true) : undefined;
        if (isMap(parent)) {
          // Point at the key of a mapping entry rather than its value.
          const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === prefix.at(-1));
          const key = pair && isScalar(pair.key) ? pair.key : undefined;
          if (key?.range) return position(key.range[0]);
        }
        const node = doc.getIn(prefix as unknown[], true);
        if (isNode(node) && node.range) return position(node.range[0]);
      }
      return { line: 1, column: 1 };
    },
  };
};
