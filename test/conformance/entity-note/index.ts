/**
 * A kind that exists only for the tests: `entity-note`, one key of an entity's custom data
 * (`POST/GET/DELETE /api/v1/catalog/{tag}/custom-data`, which the emulator serves), declared under
 * `.cortex/entity-notes/`. It is a folder and nothing else: registered with one line
 * (`createRegistry({ ...REGISTERED_KINDS, 'entity-note': entityNoteKind })`, handed to the engine
 * in its context), it is validated, planned, applied, pruned, tracked in the ownership record and
 * exported, and its setting (`maxNotesPerEntity`) is a flag, a variable, an Action input and a
 * file key, without a change to `src/` — the proof that a kind is a folder plus one line. Only
 * keys starting with `note-` are notes (an entity's other custom data is not).
 */
import { z } from 'zod';
import { encodePathSegment } from '../../../src/api/types.js';
import { CortexSyncError } from '../../../src/core/errors.js';
import type { DesiredObject, Diagnostic, JsonValue, LiveObject, ParsedDocument } from '../../../src/core/model.js';
import { type AnySettingSpec, intValue, setting } from '../../../src/core/settings.js';
import { manifestPath } from '../../../src/kinds/shared/file-name.js';
import { ownsFilesIn, YAML_FILE } from '../../../src/kinds/shared/layout.js';
import type {
  ConfigurableKind,
  ExportFetchContext,
  FetchContext,
  KindHandler,
  ParseResult,
} from '../../../src/kinds/types.js';
import { zodIssuesToDiagnostics } from '../../../src/source/zod-diagnostics.js';

export const KIND = 'entity-note';
const FOLDERS = ['entity-notes'];
/** The entity kind, whose objects the notes are attached to. */
const ENTITY = 'entity';

export const noteManifestSchema = z.strictObject({
  entity: z.string().min(1),
  key: z.string().regex(/^note-[a-z0-9-]+$/, { error: 'a note key starts with `note-`' }),
  value: z.json(),
});
export type NoteManifest = z.infer<typeof noteManifestSchema>;

/** A note as the API lists it. */
export interface LiveNote {
  entity: string;
  key: string;
  value: JsonValue;
}

const idOf = (entity: string, key: string): string => `${entity}:${key}`;
const canonical = (n: { entity: string; key: string; value: unknown }): JsonValue => ({
  entity: n.entity,
  key: n.key,
  value: n.value as JsonValue,
});

const parse = (doc: ParsedDocument): ParseResult<NoteManifest> => {
  const parsed = noteManifestSchema.safeParse(doc.value);
  if (!parsed.success)
    return { objects: [], diagnostics: zodIssuesToDiagnostics(parsed.error.issues, doc, { kind: KIND }) };
  const spec = parsed.data;
  const object: DesiredObject<NoteManifest> = {
    kind: KIND,
    id: idOf(spec.entity, spec.key),
    source: { file: doc.file, line: doc.line, column: doc.column },
    spec,
    doc,
  };
  return { objects: [object], diagnostics: [] };
};

const path = (entity: string): string => `/api/v1/catalog/${encodePathSegment(entity)}/custom-data`;

/** The notes of each of `entities`: one list read per entity (an entity that does not exist has none). */
const readNotes = async (
  ctx: Pick<FetchContext, 'client'>,
  entities: readonly string[],
): Promise<LiveObject<LiveNote>[]> => {
  const out: LiveObject<LiveNote>[] = [];
  for (const entity of [...new Set(entities)].sort()) {
    const res = await ctx.client.request<unknown>({
      operation: `list the notes of \`${entity}\``,
      method: 'GET',
      path: path(entity),
      query: { pageSize: 1000 },
      acceptStatus: [404],
    });
    if (res.status === 404 || !Array.isArray(res.body)) continue;
    for (const item of res.body as { key?: unknown; value?: unknown; source?: unknown }[]) {
      if (typeof item.key !== 'string' || !item.key.startsWith('note-') || item.source !== 'API') continue;
      const state: LiveNote = { entity, key: item.key, value: item.value as JsonValue };
      out.push({ kind: KIND, id: idOf(entity, item.key), state });
    }
  }
  return out;
};

const apply: KindHandler<NoteManifest, LiveNote>['write']['apply'] = async (change, ctx) => {
  switch (change.action) {
    case 'create':
    case 'update':
      await ctx.client.request({
        operation: `write note \`${change.id}\``,
        method: 'POST',
        path: path(change.desired.spec.entity),
        body: { key: change.desired.spec.key, value: change.desired.spec.value },
      });
      return;
    case 'delete':
      await ctx.client.request({
        operation: `delete note \`${change.id}\``,
        method: 'DELETE',
        path: path(change.live.state.entity),
        query: { key: change.live.state.key },
        acceptStatus: [404],
      });
      return;
    case 'noop':
      return;
    case 'archive':
      throw new CortexSyncError('INTERNAL', `notes cannot be archived (\`${change.id}\`)`);
  }
};

/** The kind's one setting, beside its folder: how many notes one entity may carry (a limit the file may only lower). */
export const NOTE_SETTINGS: readonly AnySettingSpec[] = [
  setting({
    key: 'maxNotesPerEntity',
    title: 'notes one entity may carry',
    help: 'refuse a plan that gives one entity more notes than this',
    flag: '--max-notes-per-entity',
    commands: ['plan', 'apply'],
    input: { name: 'max-notes-per-entity' },
    env: 'CORTEX_SYNC_MAX_NOTES_PER_ENTITY',
    file: 'lower-only',
    value: intValue(1, 1000),
    default: 100,
  }),
];

/** What the kind reads from the run's configuration (`--max-notes-per-entity`). */
export interface NoteRunSettings {
  maxNotesPerEntity?: number;
}

/** Entities the declared notes give more than `limit` notes: an error at each note past it. */
const notesPastLimit =
  (limit: number) =>
  (desired: readonly DesiredObject[]): Diagnostic[] => {
    const seen = new Map<string, number>();
    const out: Diagnostic[] = [];
    for (const obj of desired) {
      if (obj.kind !== KIND) continue;
      const entity = (obj.spec as NoteManifest).entity;
      const count = (seen.get(entity) ?? 0) + 1;
      seen.set(entity, count);
      if (count > limit)
        out.push({
          severity: 'error',
          code: 'too-many-notes',
          message: `entity \`${entity}\` is given more than ${limit} notes (maxNotesPerEntity)`,
          file: obj.source.file,
          line: obj.source.line,
          kind: KIND,
          id: obj.id,
        });
    }
    return out;
  };

/** The kind with its setting (`maxNotesPerEntity`, default 100). */
export const createEntityNoteKind = (settings: NoteRunSettings = {}): KindHandler<NoteManifest, LiveNote> => ({
  kind: KIND,
  title: 'entity note',
  refersTo: [ENTITY],
  layout: { identity: '`entity`, `key`', folders: FOLDERS, ownsFile: ownsFilesIn(FOLDERS, YAML_FILE) },
  manifest: {
    schema: noteManifestSchema,
    parse,
    references: (obj) => [{ kind: ENTITY, id: obj.spec.entity, field: 'entity', path: ['entity'], ordering: true }],
    canonical: (obj) => canonical(obj.spec),
    checkDesiredSet: notesPastLimit(settings.maxNotesPerEntity ?? 100),
  },
  live: {
    canonical: (obj) => canonical(obj.state),
    fetch: (ctx) =>
      readNotes(ctx, [
        ...ctx.desired.map((d) => d.spec.entity),
        ...ctx.managedIds.map((id) => id.slice(0, id.lastIndexOf(':'))),
      ]),
  },
  write: { apply },
  prune: { action: 'delete' },
  export: {
    toManifestFiles: (live) =>
      live.map((note) => ({
        path: manifestPath('.cortex/entity-notes', note.id),
        document: canonical(note.state),
        ids: [note.id],
      })),
    uses: [ENTITY],
    read: (ctx: ExportFetchContext<NoteManifest>) =>
      readNotes(
        ctx,
        ctx.readBefore.filter((o) => o.kind === ENTITY && !o.archived).map((o) => o.id),
      ),
  },
});

/** The kind with default settings; `configure` applies the run's. */
export const entityNoteKind: ConfigurableKind<NoteManifest, LiveNote, NoteRunSettings> = {
  ...createEntityNoteKind(),
  settings: NOTE_SETTINGS,
  configure: (settings) => createEntityNoteKind(settings),
};
