/** Test support for the entity-type, dependency and catalog-page kinds: one document parsed as the loader parses it. */
import type { ParsedDocument } from '../../../src/core/model.js';
import { parseManifestFile } from '../../../src/source/yaml.js';

export const parsedDoc = (text: string, file = '.cortex/test.yaml'): ParsedDocument => {
  const { documents, diagnostics } = parseManifestFile(file, text);
  const [doc] = documents;
  if (!doc || diagnostics.length > 0) throw new Error(`bad test YAML: ${diagnostics[0]?.message}`);
  return doc;
};
