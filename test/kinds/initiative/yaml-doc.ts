/**
 * Test helper: the first YAML document of a text, parsed by the real manifest parser
 * (`src/source/yaml.ts`), as a kind's `parse` receives it in production.
 */
import type { ParsedDocument } from '../../../src/core/model.js';
import { parseManifestFile } from '../../../src/source/yaml.js';

export const yamlDoc = (text: string, file = '.cortex/test.yaml'): ParsedDocument => {
  const parsed = parseManifestFile(file, text);
  const [doc] = parsed.documents;
  if (!doc || parsed.diagnostics.some((d) => d.severity === 'error')) {
    throw new Error(parsed.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join('; ') || 'empty document');
  }
  return doc;
};
