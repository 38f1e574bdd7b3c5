/**
 * The pure half of the `initiative` kind: Initiatives under `.cortex/initiatives/**`, identified
 * by `name`; the server's `cid` is looked up from the live list and never written by hand.
 */
import type { KindModel, ObjectReference, ParseContext, ParseResult } from '../../core/kind-contract.js';
import type { DesiredObject, Diagnostic, ParsedDocument } from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import { ownsFilesIn, YAML_FILE } from '../shared/layout.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { canonicalDesiredInitiative, canonicalLiveInitiative } from './normalize.js';
import { type InitiativeManifest, initiativeManifestSchema, type LiveInitiative } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

/** `YYYY-MM-DD` of `now` (milliseconds since the epoch), in UTC. */
export const utcDay = (now: number): string => new Date(now).toISOString().slice(0, 10);

/** A located error when `targetDate` is today or earlier: Cortex refuses to create or update such an Initiative. */
const pastTargetDate = (spec: InitiativeManifest, doc: ParsedDocument, today: string): Diagnostic | undefined => {
  if (spec.targetDate > today) return undefined;
  const at = doc.locate(['targetDate']);
  return {
    severity: 'error',
    code: 'initiative-target-date-past',
    message: `targetDate ${spec.targetDate} is not in the future (today is ${today} UTC): Cortex refuses Initiatives whose target date has passed; move it forward or remove the manifest`,
    file: doc.file,
    line: at.line,
    column: at.column,
    field: 'targetDate',
    kind: 'initiative',
    id: spec.name,
  };
};

const parse = (doc: ParsedDocument, ctx: ParseContext): ParseResult<InitiativeManifest> => {
  const parsed = initiativeManifestSchema.safeParse(doc.value);
  if (!parsed.success) {
    const name = (doc.value as { name?: unknown } | null)?.name;
    const id = typeof name === 'string' ? name : undefined;
    return {
      objects: [],
      diagnostics: zodIssuesToDiagnostics(parsed.error.issues, doc, { kind: 'initiative', id }),
    };
  }
  const spec = parsed.data;
  const expired = pastTargetDate(spec, doc, utcDay(ctx.now));
  if (expired) return { objects: [], diagnostics: [expired] };
  const object: DesiredObject<InitiativeManifest> = {
    kind: 'initiative',
    id: spec.name,
    source: { file: doc.file, line: doc.line, column: doc.column },
    spec,
    doc,
  };
  return { objects: [object], diagnostics: [] };
};

/**
 * The scorecard and the custom entity types of `filter.types`, each written before the Initiative
 * when the repository declares it (Cortex refuses an Initiative whose scorecard or types it lacks).
 */
const references = (obj: DesiredObject<InitiativeManifest>): ObjectReference[] => {
  const refs: ObjectReference[] = [
    { kind: 'scorecard', id: obj.spec.scorecardTag, field: 'scorecardTag', path: ['scorecardTag'], ordering: true },
  ];
  const types = obj.spec.filter?.types;
  for (const side of ['include', 'exclude'] as const) {
    (types?.[side] ?? []).forEach((type, i) => {
      if (BUILT_IN_ENTITY_TYPES.includes(type)) return; // every workspace has them: no edge
      refs.push({
        kind: 'entity-type',
        id: type,
        field: `filter.types.${side}[${i}]`,
        path: ['filter', 'types', side, i],
        ordering: true,
      });
    });
  }
  return refs;
};

const LAYOUT_FOLDERS = ['initiatives'];

/** The pure half of the `initiative` kind. */
export const initiativeModel: KindModel<InitiativeManifest, LiveInitiative> = {
  kind: 'initiative',
  title: 'Initiative',
  refersTo: ['scorecard', 'entity-type'],
  manifestSchema: initiativeManifestSchema,
  layoutFolders: LAYOUT_FOLDERS,
  ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_FILE),
  parse,
  references,
  desiredState: (obj) => canonicalDesiredInitiative(obj.spec),
  liveState: (obj, desired) => canonicalLiveInitiative(obj.state, desired?.spec),
  pruneAction: 'delete',
  serverAssignsIdentity: true,
  referencesReadLive: ['scorecard', 'entity-type'],
  toManifestFiles,
};
