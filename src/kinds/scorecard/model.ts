/**
 * The pure half of the `scorecard` kind: scorecards under `.cortex/scorecards/**` (where Cortex's
 * own GitOps reads them), identified by `tag`, each the vendor's scorecard descriptor.
 */
import type { KindExportModel, KindModel, ObjectReference, ParseResult } from '../../core/kind-contract.js';
import type { DesiredObject, ParsedDocument } from '../../core/model.js';
import { formatFieldPath, zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import { ownsFilesIn, YAML_FILE } from '../shared/layout.js';
import { checkInitiativesAgainstScorecards } from './initiative-check.js';
import { keptOnWrite } from './keep-live.js';
import { canonicalDesiredScorecard, canonicalLiveScorecard } from './normalize.js';
import { type LiveScorecard, type ScorecardManifest, scorecardManifestSchema } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

export const KIND = 'scorecard';

const parse = (doc: ParsedDocument): ParseResult<ScorecardManifest> => {
  const parsed = scorecardManifestSchema.safeParse(doc.value);
  if (!parsed.success) {
    const tag = (doc.value as { tag?: unknown } | null)?.tag;
    const id = typeof tag === 'string' ? tag : undefined;
    return { objects: [], diagnostics: zodIssuesToDiagnostics(parsed.error.issues, doc, { kind: KIND, id }) };
  }
  const spec = parsed.data;
  return {
    objects: [{ kind: KIND, id: spec.tag, source: { file: doc.file, line: doc.line, column: doc.column }, spec, doc }],
    diagnostics: [],
  };
};

/**
 * The custom entity types its filters name (the scorecard's own and each rule's), applied before
 * it as for an Initiative's filter; built-in types every workspace has are no reference.
 */
const references = (obj: DesiredObject<ScorecardManifest>): ObjectReference[] => {
  const refs: ObjectReference[] = [];
  const typesOf = (types: { include?: string[]; exclude?: string[] } | undefined, at: (string | number)[]) => {
    for (const side of ['include', 'exclude'] as const) {
      (types?.[side] ?? []).forEach((type, i) => {
        if (BUILT_IN_ENTITY_TYPES.includes(type)) return;
        const path = [...at, 'types', side, i];
        refs.push({ kind: 'entity-type', id: type, field: formatFieldPath(path), path, ordering: true });
      });
    }
  };
  typesOf(obj.spec.filter?.types, ['filter']);
  obj.spec.rules.forEach((rule, i) => typesOf(rule.filter?.types, ['rules', i, 'filter']));
  return refs;
};

const LAYOUT_FOLDERS = ['scorecards'];

/** The pure half of the `scorecard` kind. */
export const scorecardModel: KindModel<ScorecardManifest, LiveScorecard> & {
  readonly export: KindExportModel<LiveScorecard>;
} = {
  kind: KIND,
  title: 'scorecard',
  refersTo: ['entity-type'],
  layout: { identity: '`tag`', folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_FILE) },
  manifest: {
    schema: scorecardManifestSchema,
    parse,
    references,
    canonical: (obj) => canonicalDesiredScorecard(obj.spec),
    checkDesiredSet: checkInitiativesAgainstScorecards,
  },
  live: { canonical: (obj, desired) => canonicalLiveScorecard(obj.state, desired?.spec) },
  write: { keptOnWrite },
  prune: {
    action: 'delete',
    keptWhileHeld: {
      refusal:
        'Initiatives that name a deleted scorecard are left naming nothing (Cortex refuses every later write of them, and the plans of the sources that declare them)',
      remedy: 'delete those Initiatives, or point them at another scorecard',
    },
  },
  export: { toManifestFiles },
};
