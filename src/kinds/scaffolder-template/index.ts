/**
 * The `scaffolder-template` kind: Scaffolder templates under `.cortex/scaffolders/**`, identified
 * by `tag`. Creates and updates are one upsert (`POST /api/v1/scaffolders`, by tag); `PUT` is
 * never sent, because it fails for a template that does not exist and renames on a tag change.
 */
import { explainRefusal } from '../shared/explain-refusal.js';
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { ApiError, CortexSyncError, isApiError } from '../../core/errors.js';
import type { LiveObject } from '../../core/model.js';
import { readEachOnce, readOneOrAbsent, readPagedList } from '../shared/api-reads.js';
import type { ApplyContext, FetchContext, KindChange, KindHandler } from '../types.js';
import { scaffolderTemplateModel } from './model.js';
import { canonicalDesiredTemplate, canonicalLiveTemplate, scaffolderRequestBody } from './normalize.js';
import type { LiveScaffolderTemplate, ScaffolderTemplateManifest } from './schema.js';
import { liveScaffolderTemplateSchema } from './schema.js';

type TemplateChange = KindChange<ScaffolderTemplateManifest, LiveScaffolderTemplate>;

const SCAFFOLDERS_PATH = '/api/v1/scaffolders';

/** What a 403 from the Scaffolder API means (the feature is flagged per tenant; writes also need a permission). */
export const SCAFFOLDER_FORBIDDEN_HINT =
  'Scaffolder API not enabled for this workspace (or the API key lacks the Configure Scaffolder permission)';

/** Rewrites a 403 into the clear message; other errors are returned as they are. */
const explainForbidden = (error: unknown): unknown => {
  if (!isApiError(error) || error.status !== 403) return error;
  return new ApiError(
    'API',
    {
      operation: error.operation,
      method: error.method,
      path: error.path,
      status: error.status,
      apiMessage: error.apiMessage ? `${SCAFFOLDER_FORBIDDEN_HINT}: ${error.apiMessage}` : SCAFFOLDER_FORBIDDEN_HINT,
      body: error.body,
      attempts: error.attempts,
      durationMs: error.durationMs,
      requestId: error.requestId,
    },
    { cause: error },
  );
};

const listTemplates = (client: ApiClient): Promise<LiveScaffolderTemplate[]> =>
  readPagedList(client, {
    request: { operation: 'list Scaffolder templates', method: 'GET', path: SCAFFOLDERS_PATH },
    list: 'scaffolders',
    item: liveScaffolderTemplateSchema,
    itemName: 'a template',
  });

/** A template as read, known by its tag; its server id (`id`, else `cid`) when it has one. */
const liveOf = (t: LiveScaffolderTemplate): LiveObject<LiveScaffolderTemplate> => {
  const serverId = t.id ?? t.cid;
  return { kind: 'scaffolder-template', id: t.tag, ...(serverId ? { serverId } : {}), state: t };
};

/** Does the live template already equal its manifest (in what the manifest states)? */
const liveEqualsManifest = (live: LiveScaffolderTemplate, spec: ScaffolderTemplateManifest): boolean =>
  JSON.stringify(canonicalLiveTemplate(live, spec)) === JSON.stringify(canonicalDesiredTemplate(spec));

/** The upsert: safe to retry, since the server updates the template with that tag instead of adding one. */
const upsertTemplate = async (client: ApiClient, spec: ScaffolderTemplateManifest): Promise<void> => {
  await client.request({
    operation: `upsert Scaffolder template ${spec.tag}`,
    method: 'POST',
    path: SCAFFOLDERS_PATH,
    body: scaffolderRequestBody(spec),
    idempotent: true,
  });
};

const deleteTemplate = async (client: ApiClient, tag: string): Promise<void> => {
  await client.request({
    operation: `delete Scaffolder template ${tag}`,
    method: 'DELETE',
    path: `${SCAFFOLDERS_PATH}/${encodePathSegment(tag)}`,
    idempotent: true,
    acceptStatus: [404],
  });
};

/** The `scaffolder-template` handler. */
export const scaffolderTemplateKind: KindHandler<ScaffolderTemplateManifest, LiveScaffolderTemplate> = {
  ...scaffolderTemplateModel,
  live: {
    ...scaffolderTemplateModel.live,
    /**
     * Every template. A 403 means the Scaffolder API is not enabled for the workspace: with no
     * template declared or managed here that is no reason to fail the sync (nothing to read),
     * otherwise it fails with a message that says so.
     */
    async fetch(ctx: FetchContext<ScaffolderTemplateManifest>): Promise<LiveObject<LiveScaffolderTemplate>[]> {
      let templates: LiveScaffolderTemplate[];
      try {
        templates = await listTemplates(ctx.client);
      } catch (error) {
        const nothingOurs = ctx.desired.length === 0 && ctx.managedIds.length === 0;
        if (isApiError(error) && error.status === 403 && nothingOurs) return [];
        throw explainForbidden(error);
      }
      return templates.map(liveOf);
    },

    /** The templates with these tags, one `GET /scaffolders/{tag}` each (404: none). */
    async fetchByIds(
      ids: readonly string[],
      ctx: FetchContext<ScaffolderTemplateManifest>,
    ): Promise<LiveObject<LiveScaffolderTemplate>[]> {
      return readEachOnce(ids, async (tag) => {
        const template = await readOneOrAbsent(ctx.client, {
          request: {
            operation: `read Scaffolder template ${tag}`,
            method: 'GET',
            path: `${SCAFFOLDERS_PATH}/${encodePathSegment(tag)}`,
          },
          item: liveScaffolderTemplateSchema,
          itemName: 'a template',
        }).catch((error: unknown) => {
          throw explainForbidden(error);
        });
        return template?.tag === tag ? liveOf(template) : undefined;
      });
    },
  },
  write: {
    async apply(change: TemplateChange, ctx: ApplyContext): Promise<void> {
      try {
        switch (change.action) {
          case 'noop':
            return;
          case 'update':
            // An adopted template that already equals its manifest needs no write.
            if (liveEqualsManifest(change.live.state, change.desired.spec)) return;
            return await upsertTemplate(ctx.client, change.desired.spec);
          case 'create':
            return await upsertTemplate(ctx.client, change.desired.spec);
          case 'delete':
            return await deleteTemplate(ctx.client, change.id);
          case 'archive':
            throw new CortexSyncError('INTERNAL', 'Scaffolder templates cannot be archived; prune deletes them');
        }
      } catch (error) {
        throw explainForbidden(error);
      }
    },

    explainFailure: explainRefusal({
      kind: 'scaffolder-template',
      name: (id) => `Scaffolder template ${id}`,
      fieldHints: [[/repo|git|locator/i, 'repoLocator']],
      // A 403 is the Scaffolder API not enabled (or a permission): `explainForbidden` says so.
      notTheManifest: [403],
    }),
  },
};
