/**
 * JSON Schemas of the manifests, for editors (yaml-language-server), generated from the same zod
 * schemas that validate them. `npm run schemas` writes them to `schemas/`; a test fails when the
 * committed copies drift from the code. No `$id`: the project owns no address to name them by, and
 * a relative one would resolve to wherever the file was read from, as no `$id` does (each schema
 * refers only inside itself, `#/$defs/…`). `export` writes them beside the manifests.
 */
import { z } from 'zod';
import type { KindName } from '../core/model.js';
import { KIND_HANDLERS } from '../kinds/registry.js';

export const schemaFileName = (kind: KindName): string => `${kind}.schema.json`;

/** One JSON Schema document per kind, as pretty-printed JSON text ending in a newline. */
export const manifestJsonSchemas = (): Map<KindName, string> => {
  const out = new Map<KindName, string>();
  for (const handler of KIND_HANDLERS) {
    const schema = z.toJSONSchema(handler.manifest.schema, { io: 'input', unrepresentable: 'any' });
    const document = {
      title: `cortex-sync ${handler.title} manifest`,
      ...schema,
    };
    out.set(handler.kind, `${JSON.stringify(document, null, 2)}\n`);
  }
  return out;
};
