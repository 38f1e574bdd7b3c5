/**
 * The text of an exported manifest: an optional `# yaml-language-server: $schema=…` line, then one
 * block-style YAML document. Strings a YAML 1.1 reader would retype (`yes`, `on`, `0777`, dates)
 * are quoted, so every reader gets the same values back; no line folding. Pure.
 */
import { stringify } from 'yaml';
import type { JsonValue, KindName } from '../core/model.js';
import { schemaFileName } from '../schemas/json-schemas.js';

/** Where editors find a kind's JSON Schema (the `$id` of the files in `schemas/`). */
export const schemaUrl = (kind: KindName): string => `https://cortex-sync.dev/schemas/${schemaFileName(kind)}`;

/** The YAML document alone. */
export const manifestYaml = (document: JsonValue): string =>
  stringify(document, {
    version: '1.1',
    lineWidth: 0,
    minContentWidth: 0,
    indentSeq: true,
    aliasDuplicateObjects: false,
  });

/** The whole file: the schema line (every kind has a schema in `schemas/`), then the document. */
export const manifestText = (kind: KindName, document: JsonValue): string =>
  `# yaml-language-server: $schema=${schemaUrl(kind)}\n${manifestYaml(document)}`;
