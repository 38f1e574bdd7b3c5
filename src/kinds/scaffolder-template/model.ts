/**
 * The pure half of the `scaffolder-template` kind: Scaffolder templates under
 * `.cortex/scaffolders/**`, identified by `tag`.
 */
import type { KindModel, ParseResult } from '../../core/kind-contract.js';
import type { ParsedDocument } from '../../core/model.js';
import { ownsFilesIn, YAML_FILE } from '../shared/layout.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { canonicalDesiredTemplate, canonicalLiveTemplate } from './normalize.js';
import {
  type LiveScaffolderTemplate,
  type ScaffolderTemplateManifest,
  scaffolderTemplateManifestSchema,
} from './schema.js';
import { toManifestFiles } from './to-manifest.js';

const parse = (doc: ParsedDocument): ParseResult<ScaffolderTemplateManifest> => {
  const parsed = scaffolderTemplateManifestSchema.safeParse(doc.value);
  if (!parsed.success) {
    const tag = (doc.value as { tag?: unknown } | null)?.tag;
    const id = typeof tag === 'string' ? tag : undefined;
    return {
      objects: [],
      diagnostics: zodIssuesToDiagnostics(parsed.error.issues, doc, { kind: 'scaffolder-template', id }),
    };
  }
  const spec = parsed.data;
  return {
    objects: [
      {
        kind: 'scaffolder-template',
        id: spec.tag,
        source: { file: doc.file, line: doc.line, column: doc.column },
        spec,
        doc,
      },
    ],
    diagnostics: [],
  };
};

/** The pure half of the `scaffolder-template` kind. */
const LAYOUT_FOLDERS = ['scaffolders'];

export const scaffolderTemplateModel: KindModel<ScaffolderTemplateManifest, LiveScaffolderTemplate> = {
  kind: 'scaffolder-template',
  title: 'Scaffolder template',
  layout: { identity: '`tag`', folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_FILE) },
  manifest: {
    schema: scaffolderTemplateManifestSchema,
    parse,
    references: () => [],
    canonical: (obj) => canonicalDesiredTemplate(obj.spec),
  },
  live: { canonical: (obj, desired) => canonicalLiveTemplate(obj.state, desired?.spec) },
  prune: { action: 'delete' },
  export: { toManifestFiles },
};
