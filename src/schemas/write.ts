/** `npm run schemas`: writes the manifests' JSON Schemas to `schemas/`. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { manifestJsonSchemas, schemaFileName } from './json-schemas.js';

const target = join(import.meta.dirname, '..', '..', 'schemas');
for (const [kind, text] of manifestJsonSchemas()) {
  await writeFile(join(target, schemaFileName(kind)), text);
  process.stdout.write(`wrote schemas/${schemaFileName(kind)}\n`);
}
