/**
 * The pure half of the `initiative` kind: Initiatives under `.cortex/initiatives/**`, identified
 * by `name`; the server's `cid` is looked up from the live list and never written by hand.
 */
import type {
  KindModel,
  LiveCheckContext,
  ObjectReference,
  ParseContext,
  ParseResult,
} from '../../core/kind-contract.js';
import type { DesiredObject, Diagnostic, LiveObject, ParsedDocument } from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../shared/built-in-entity-types.js';
import { ownsFilesIn, YAML_FILE } from '../shared/layout.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import { canonicalDesiredInitiative, canonicalLiveInitiative, liveEqualsManifest } from './normalize.js';
import { type InitiativeManifest, initiativeManifestSchema, type LiveInitiative } from './schema.js';
import { toManifestFiles } from './to-manifest.js';

/** `YYYY-MM-DD` of `now` (milliseconds since the epoch), in UTC. */
const utcDay = (now: number): string => new Date(now).toISOString().slice(0, 10);

/**
 * A located diagnostic when `targetDate` is today or earlier. Cortex refuses every write (create,
 * and the full-replace update, whether or not it changes the date) of an Initiative whose target
 * date is not in the future, so that is an error only for an Initiative the plan writes (`write`);
 * offline, and for one the plan leaves alone, it is a warning: a date passing must never stop the
 * rest of the source.
 */
const pastTargetDate = (
  spec: InitiativeManifest,
  doc: ParsedDocument,
  today: string,
  write?: 'create' | 'update',
): Diagnostic | undefined => {
  if (spec.targetDate > today) return undefined;
  const at = doc.locate(['targetDate']);
  return {
    severity: write ? 'error' : 'warning',
    code: 'initiative-target-date-past',
    message: write
      ? `targetDate ${spec.targetDate} is not in the future (today is ${today} UTC) and this plan would ${write} it: Cortex refuses any write of an Initiative whose target date has passed; move it forward, or leave the Initiative as it is live`
      : `targetDate ${spec.targetDate} has passed (today is ${today} UTC): the Initiative is left as it is; Cortex refuses to create or change it until the date is moved forward`,
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
  const object: DesiredObject<InitiativeManifest> = {
    kind: 'initiative',
    id: spec.name,
    source: { file: doc.file, line: doc.line, column: doc.column },
    spec,
    doc,
  };
  return { objects: [object], diagnostics: expired ? [expired] : [] };
};

/**
 * At plan, a past `targetDate` is an error when the plan writes the Initiative: creates it, or
 * updates it (any field differs; an adopted one that already equals its manifest is not written).
 * The parse's warning stands for one left alone.
 */
const checkAgainstLive = (
  obj: DesiredObject<InitiativeManifest>,
  live: LiveObject<LiveInitiative> | undefined,
  ctx: LiveCheckContext,
): Diagnostic[] => {
  if (ctx.now === undefined) return [];
  if (live !== undefined && liveEqualsManifest(live.state, obj.spec)) return [];
  const refused = pastTargetDate(obj.spec, obj.doc, utcDay(ctx.now), live === undefined ? 'create' : 'update');
  return refused ? [refused] : [];
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
  layout: { identity: '`name`', folders: LAYOUT_FOLDERS, ownsFile: ownsFilesIn(LAYOUT_FOLDERS, YAML_FILE) },
  manifest: {
    schema: initiativeManifestSchema,
    parse,
    references,
    canonical: (obj) => canonicalDesiredInitiative(obj.spec),
    // A prune keeps a scorecard while any Initiative names it, this source's or not (see the scorecard kind).
    names: { kind: 'scorecard', idOf: (obj) => ('spec' in obj ? obj.spec.scorecardTag : obj.state.scorecardTag) },
  },
  live: {
    canonical: (obj, desired) => canonicalLiveInitiative(obj.state, desired?.spec),
    checkAgainstLive,
    serverAssignsIdentity: true,
    referencesReadLive: ['scorecard', 'entity-type'],
  },
  prune: { action: 'delete' },
  export: { toManifestFiles },
};
