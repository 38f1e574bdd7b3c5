/**
 * The text of an exported manifest: an optional `# yaml-language-server: $schema=…` line, then one
 * block-style YAML document. Strings a YAML 1.1 reader would retype (`yes`, `on`, `0777`, dates)
 * are quoted, so every reader gets the same values back; no line folding. Pure.
 */
import { stringify } from 'yaml';
import type { JsonValue, KindName } from '../core/model.js';
import { schemaFileName } from '../schemas/json-schemas.js';

/** The YAML document alone. */
export const manifestYaml = (document: JsonValue): string =>
  stringify(document, {
    version: '1.1',
    lineWidth: 0,
    minContentWidth: 0,
    indentSeq: true,
    aliasDuplicateObjects: false,
  });

/**
 * The whole file: the schema line (every kind has a schema in `schemas/`), then the document.
 * `schemaRef` is where the file's editor finds it (`schema-ref.ts`: a URI reference, no space or
 * line break); by default the schema's file name, as if it were beside the file.
 */
export const manifestText = (kind: KindName, document: JsonValue, schemaRef = schemaFileName(kind)): string =>
  `# yaml-language-server: $schema=${schemaRef}\n${manifestYaml(document)}`;
