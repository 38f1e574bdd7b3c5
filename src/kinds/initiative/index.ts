/**
 * The `initiative` kind: Initiatives under `.cortex/initiatives/**`, identified by `name`; the
 * server's `cid` is looked up from the live list and never written by hand.
 */
import { CortexSyncError, isApiError } from '../../core/errors.js';
import type { Change, DesiredObject, Diagnostic, LiveObject, ParsedDocument } from '../../core/model.js';
import { BUILT_IN_ENTITY_TYPES } from '../../core/references.js';
import { zodIssuesToDiagnostics } from '../../source/zod-diagnostics.js';
import type { ApplyContext, FetchContext, KindHandler, ObjectReference, ParseResult } from '../types.js';
import { createInitiative, deleteInitiative, duplicateNameError, listInitiatives, updateInitiative } from './api.js';
import { canonicalDesiredInitiative, canonicalLiveInitiative } from './normalize.js';
import type { InitiativeManifest, LiveInitiative } from './schema.js';
import { initiativeManifestSchema } from './schema.js';

export interface InitiativeKindOptions {
  /** The clock for the "targetDate is not in the future" warning (milliseconds since the epoch). */
  now?: () => number;
}

const specOf = (change: Change): InitiativeManifest => {
  if (!change.desired) {
    throw new CortexSyncError('INTERNAL', `${change.action} of initiative "${change.id}" has no manifest`);
  }
  return change.desired.spec as InitiativeManifest;
};

const cidOf = (change: Change): string => {
  const cid = change.live?.serverId;
  if (!cid) throw new CortexSyncError('INTERNAL', `${change.action} of initiative "${change.id}" has no live cid`);
  return cid;
};

/** Does the live Initiative of `change` already equal its manifest? */
const liveEqualsManifest = (change: Change): boolean => {
  const state = change.live?.state as LiveInitiative | undefined;
  return (
    state !== undefined &&
    JSON.stringify(canonicalLiveInitiative(state)) === JSON.stringify(canonicalDesiredInitiative(specOf(change)))
  );
};

/** A located warning when `targetDate` is today or earlier: the API rejects writes of such an Initiative. */
const pastTargetDateWarning = (
  spec: InitiativeManifest,
  doc: ParsedDocument,
  today: string,
): Diagnostic | undefined => {
  if (spec.targetDate > today) return undefined;
  const at = doc.locate(['targetDate']);
  return {
    severity: 'warning',
    code: 'initiative-target-date-past',
    message: `targetDate ${spec.targetDate} is not in the future (today is ${today} UTC): Cortex rejects creating or updating this Initiative; nothing is sent while it is unchanged`,
    file: doc.file,
    line: at.line,
    column: at.column,
    field: 'targetDate',
    kind: 'initiative',
    id: spec.name,
  };
};

/** Which manifest field an API refusal most likely concerns (by its message), for a located diagnostic. */
const FIELD_HINTS: readonly [RegExp, string][] = [
  [/target\s*date/i, 'targetDate'],
  [/\brules?\b|expression/i, 'emphasizedRules'],
  [/\blevels?\b|\brank\b/i, 'emphasizedLevels'],
  [/scorecard/i, 'scorecardTag'],
  [/notification|time\s*unit|email/i, 'notificationSchedule'],
  [/filter|query|group|type/i, 'filter'],
];

/** Builds the `initiative` handler; tests inject the clock. */
export const createInitiativeKind = (
  options: InitiativeKindOptions = {},
): KindHandler<InitiativeManifest, LiveInitiative> => {
  const now = options.now ?? Date.now;
  return {
    kind: 'initiative',
    title: 'Initiative',
    manifestSchema: initiativeManifestSchema,

    ownsFile: (relPath) => relPath.startsWith('.cortex/initiatives/') && /\.ya?ml$/i.test(relPath),

    parse(doc): ParseResult<InitiativeManifest> {
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
      const warning = pastTargetDateWarning(spec, doc, new Date(now()).toISOString().slice(0, 10));
      return {
        objects: [
          {
            kind: 'initiative',
            id: spec.name,
            source: { file: doc.file, line: doc.line, column: doc.column },
            spec,
            doc,
          },
        ],
        diagnostics: warning ? [warning] : [],
      };
    },

    references(obj: DesiredObject<InitiativeManifest>): ObjectReference[] {
      const refs: ObjectReference[] = [
        {
          kind: 'scorecard',
          id: obj.spec.scorecardTag,
          field: 'scorecardTag',
          path: ['scorecardTag'],
          ordering: false,
        },
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
    },

    /**
     * Every Initiative, drafts and expired ones included. Two live Initiatives sharing a name that
     * this repository declares or manages stop the plan with a `PLAN` error naming both cids;
     * duplicates it has nothing to do with are left out (they are not its to change or prune).
     */
    async fetchLive(ctx: FetchContext): Promise<LiveObject<LiveInitiative>[]> {
      const live = await listInitiatives(ctx.client);
      const ours = new Set([...ctx.desired.map((d) => d.id), ...ctx.managedIds]);
      const byName = new Map<string, LiveInitiative[]>();
      for (const i of live) byName.set(i.name, [...(byName.get(i.name) ?? []), i]);
      const objects: LiveObject<LiveInitiative>[] = [];
      for (const [name, same] of byName) {
        if (same.length > 1) {
          if (ours.has(name))
            throw duplicateNameError(
              name,
              same.map((i) => i.cid),
            );
          continue;
        }
        const [only] = same;
        if (only) objects.push({ kind: 'initiative', id: name, serverId: only.cid, state: only });
      }
      return objects;
    },

    desiredState: (obj) => canonicalDesiredInitiative(obj.spec),
    liveState: (obj) => canonicalLiveInitiative(obj.state),

    pruneAction: 'delete',

    async apply(change: Change, ctx: ApplyContext): Promise<void> {
      switch (change.action) {
        case 'noop':
          return;
        case 'create':
          // `adopt`: the planner saw it live; the create path finds it by name and PUTs by cid.
          if (change.live?.serverId) return updateInitiative(ctx.client, change.live.serverId, specOf(change), ctx.options.pendingCreates);
          return createInitiative(ctx.client, specOf(change), ctx.options.pendingCreates);
        case 'update':
          // An adopted Initiative that already equals its manifest needs no write (ownership is in
          // the inventory); a PUT could even be refused, e.g. once its targetDate has passed.
          if (liveEqualsManifest(change)) return;
          return updateInitiative(ctx.client, cidOf(change), specOf(change), ctx.options.pendingCreates);
        case 'delete':
          return deleteInitiative(ctx.client, cidOf(change), change.id);
        case 'archive':
          throw new CortexSyncError('INTERNAL', 'Initiatives cannot be archived; prune deletes them');
      }
    },

    explainFailure(change: Change, error: Error): Diagnostic[] {
      const doc = change.desired?.doc;
      if (!doc || !isApiError(error) || error.status === undefined || error.status >= 500) return [];
      const text = error.apiMessage ?? '';
      const field = FIELD_HINTS.find(([pattern]) => pattern.test(text))?.[1];
      const at = field ? doc.locate([field]) : { line: doc.line, column: doc.column };
      return [
        {
          severity: 'error',
          code: 'api-violation',
          message: `Cortex refused Initiative "${change.id}" (HTTP ${error.status})${text ? `: ${text}` : ''}`,
          file: doc.file,
          line: at.line,
          column: at.column,
          ...(field ? { field } : {}),
          kind: 'initiative',
          id: change.id,
        },
      ];
    },
  };
};

/** The `initiative` handler with the real clock. */
export const initiativeKind = createInitiativeKind();
