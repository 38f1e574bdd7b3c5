/**
 * How `export` reads dependency edges: every entity is a possible caller, and the API has no bulk
 * read of edges, so one paged read per entity, in chunks between which the run may stop, with
 * progress and an estimate from the client's rate budget. Edges a caller's descriptor declares
 * (`x-cortex-dependency`) stay with the descriptor and are left out. Only GET requests.
 *
 * With `--include-archived` the archived entities export writes are callers too: their edges go
 * with them, so applying the export brings each back with its edges (and a prune knows them).
 * A caller the API answers 404 for (an archived entity whose edges it will not show, an entity
 * deleted during the export) is exported without edges, and a warning names it: never left out
 * silently, never failing the whole export.
 */
import { type ApiError, InterruptedError } from '../../core/errors.js';
import type { Diagnostic, LiveObject } from '../../core/model.js';
import { countOf } from '../../core/plural.js';
import type { EntityLive } from '../entity/live-state.js';
import { estimateReadMs, formatDuration } from '../shared/read-estimate.js';
import type { ExportFetchContext } from '../types.js';
import type { DependencySpec, LiveDependency } from './schema.js';
import { descriptorEdgeKeys, edgeKeyOf } from './to-manifest.js';

/** Callers whose edges are read between two progress reports. */
const CALLERS_PER_CHUNK = 50;

const DOTS_ONLY = /^\.+$/;

/** The entity kind, whose live objects are the callers. */
const ENTITY = 'entity';

/**
 * Reads the outgoing edges of `callers` (the kind's own per-caller read); a caller the API answers
 * 404 for is told to `onMissing`, and has none.
 */
type ReadEdgesOf = (
  ctx: ExportFetchContext<DependencySpec>,
  callers: readonly string[],
  onMissing: (caller: string, error: ApiError) => void,
) => Promise<LiveObject<LiveDependency>[]>;

/** The warning for a caller whose edges could not be read (404): it is exported without them. */
const missingCallerWarning = (caller: string, archived: boolean, error: ApiError): Diagnostic => ({
  severity: 'warning',
  code: 'dependency-edges-unread',
  kind: 'dependency',
  id: caller,
  message: archived
    ? `the dependency edges of the archived entity \`${caller}\` could not be read (${error.message}): it is exported without them, and applying the export would not bring them back`
    : `the entity \`${caller}\` was not found when its dependency edges were read (${error.message}): its edges are not exported`,
});

/** The export read of the dependency kind (see the module comment), over its per-caller read. */
export const exportEdges =
  (readEdgesOf: ReadEdgesOf) =>
  async (ctx: ExportFetchContext<DependencySpec>): Promise<LiveObject<LiveDependency>[]> => {
    // A tag of dots only cannot be in a request path (it would name another endpoint), and its
    // entity is not exported (no manifest `validate` accepts holds it): its edges are not read.
    // Archived entities are exported (and so callers) only with `--include-archived`.
    const entities = ctx.readBefore.filter(
      (o) => o.kind === ENTITY && (ctx.includeArchived || !o.archived) && !DOTS_ONLY.test(o.id),
    );
    const callers = entities.map((e) => e.id).sort();
    const archived = new Set(entities.filter((e) => e.archived).map((e) => e.id));
    const onMissing = (caller: string, error: ApiError): void =>
      ctx.warn(missingCallerWarning(caller, archived.has(caller), error));
    const started = ctx.now();
    ctx.progress(
      `Reading the dependency edges of ${countOf(callers.length, 'entity')}: one request each (the API has no bulk read of edges), ` +
        `${formatDuration(estimateReadMs(callers.length, ctx.requestsPerMinute))} at ${ctx.requestsPerMinute} requests/minute. ` +
        'Leave them out with --kinds.',
    );
    const declared = new Map(
      entities.map((e) => [e.id, descriptorEdgeKeys((e.state as EntityLive | undefined)?.descriptor ?? null)]),
    );
    const edges: LiveObject<LiveDependency>[] = [];
    let lastReport = started;
    for (let i = 0; i < callers.length; i += CALLERS_PER_CHUNK) {
      // A stop request ends the reads between two chunks; nothing has been written yet.
      if (ctx.signal.aborted) throw new InterruptedError();
      for (const edge of await readEdgesOf(ctx, callers.slice(i, i + CALLERS_PER_CHUNK), onMissing)) {
        const state = edge.state;
        if (declared.get(state.callerTag)?.has(edgeKeyOf(state.calleeTag, state.method, state.path))) continue;
        edges.push(edge);
      }
      const now = ctx.now();
      const done = Math.min(i + CALLERS_PER_CHUNK, callers.length);
      if (now - lastReport >= 2_000 && done < callers.length) {
        lastReport = now;
        const left = ((now - started) / done) * (callers.length - done);
        ctx.progress(`  dependency edges: ${done}/${callers.length} callers read, ${formatDuration(left)} left`);
      }
    }
    return edges;
  };
