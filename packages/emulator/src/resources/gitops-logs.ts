/**
 * GitOps logs: what the vendor's own GitOps processing recorded per commit. The emulator does no
 * GitOps processing, so logs come from `POST /_emulator/gitops-logs` or the `--data` file, and are
 * read with `GET /api/v1/gitops-logs` (paged `logs`, newest first; filters `repository`, `sha`,
 * `file`/`fileName`, `operation`, `errorOnly`, `tag`, `scorecardTag`, `workflowTag`: a log is listed
 * with the files that match) and `GET /api/v1/catalog/{tagOrId}/gitops-logs` (the entity's files
 * in its most recent log, 404 when it has none). Permission "View GitOps logs" for the list.
 */
import { z } from 'zod';
import { errorResponse, pagedResponse, type RouteDef } from '../contract.js';
import { isoSeconds, type JsonObject } from '../util.js';
import { booleanQuery } from './initiatives-body.js';
import { type EntitiesState, findEntity } from './entity-store.js';

const OPERATIONS = ['CREATED', 'UPDATED', 'ARCHIVED', 'NO_CHANGE'] as const;
const change = z.object({ tag: z.string().min(1), name: z.string(), operation: z.enum(OPERATIONS) });

/** One log as the control endpoint and the data file take it (the vendor's `GitOpsLogResponse`). */
export const gitopsLogInput = z.object({
  commit: z.string().min(1),
  dateCreated: z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'expected a date-time' })
    .optional(),
  repository: z.object({
    provider: z.enum(['GITHUB', 'GITLAB', 'BITBUCKET', 'AZURE_DEVOPS']),
    repositoryName: z.string().min(1),
  }),
  files: z
    .array(
      z.object({
        fileName: z.string().min(1),
        isPackageFile: z.boolean().default(false),
        entity: change.extend({ type: z.string() }).optional(),
        scorecard: change.optional(),
        workflow: change.optional(),
        error: z.object({ errorType: z.string(), message: z.string() }).optional(),
      }),
    )
    .min(1),
});
export type GitopsLogInput = z.infer<typeof gitopsLogInput>;

export interface StoredGitopsLog extends Omit<GitopsLogInput, 'dateCreated'> {
  /** ms since the epoch. */
  dateCreated: number;
}

export interface GitopsLogsState {
  logs: StoredGitopsLog[];
}

export const initialGitopsLogsState = (): GitopsLogsState => ({ logs: [] });

type File = StoredGitopsLog['files'][number];

const newestFirst = (a: StoredGitopsLog, b: StoredGitopsLog): number => b.dateCreated - a.dateCreated;

const logView = (log: StoredGitopsLog, files: File[]): JsonObject => ({
  commit: log.commit,
  dateCreated: isoSeconds(log.dateCreated),
  repository: log.repository,
  files,
});

/** Adds a validated log; its date defaults to now. */
export const addGitopsLog = (state: GitopsLogsState, input: GitopsLogInput, now: number): StoredGitopsLog => {
  const log: StoredGitopsLog = { ...input, dateCreated: input.dateCreated ? Date.parse(input.dateCreated) : now };
  state.logs.push(log);
  return log;
};

export const gitopsLogRoutes: readonly RouteDef<{ entities: EntitiesState; gitopsLogs: GitopsLogsState }>[] = [
  {
    method: 'GET',
    pattern: '/api/v1/gitops-logs',
    permission: ['VIEW_GITOPS_LOGS'],
    handle(req, state) {
      const q = req.query;
      const text = (name: string): string | null => {
        const v = q.get(name);
        return v === null || v === '' ? null : v;
      };
      const operation = text('operation');
      if (operation !== null && !(OPERATIONS as readonly string[]).includes(operation)) {
        return errorResponse(400, 'BAD_REQUEST', `operation must be one of ${OPERATIONS.join(', ')}`);
      }
      const errorOnly = booleanQuery(q, 'errorOnly', false);
      if (errorOnly === null) return errorResponse(400, 'BAD_REQUEST', 'errorOnly must be true or false');
      const [repository, sha, fileName, tag, scorecardTag, workflowTag] = [
        'repository',
        'sha',
        'fileName',
        'tag',
        'scorecardTag',
        'workflowTag',
      ].map(text);
      const file = text('file');
      const fileMatches = (f: File): boolean =>
        (fileName === null || f.fileName === fileName) &&
        (file === null || f.fileName === file || f.fileName.endsWith(`/${file}`)) &&
        (!errorOnly || f.error !== undefined) &&
        (tag === null || f.entity?.tag === tag) &&
        (scorecardTag === null || f.scorecard?.tag === scorecardTag) &&
        (workflowTag === null || f.workflow?.tag === workflowTag) &&
        (operation === null || [f.entity, f.scorecard, f.workflow].some((c) => c?.operation === operation));
      const logs = [...state.gitopsLogs.logs]
        .sort(newestFirst)
        .filter(
          (l) =>
            (repository === null || l.repository.repositoryName === repository) && (sha === null || l.commit === sha),
        )
        .map((l) => ({ log: l, files: l.files.filter(fileMatches) }))
        .filter((x) => x.files.length > 0)
        .map((x) => logView(x.log, x.files));
      return pagedResponse(logs, q, 'logs');
    },
  },
  {
    method: 'GET',
    pattern: '/api/v1/catalog/:tagOrId/gitops-logs',
    permission: null,
    handle(req, state) {
      const tagOrId = req.params.tagOrId ?? '';
      const entity = findEntity(state.entities, tagOrId);
      if (!entity) return errorResponse(404, 'NOT_FOUND', `Entity not found: ${tagOrId}`);
      for (const log of [...state.gitopsLogs.logs].sort(newestFirst)) {
        const files = log.files.filter((f) => f.entity?.tag === entity.tag);
        if (files.length === 0) continue;
        return {
          status: 200,
          body: files.map((f) => ({
            commit: log.commit,
            dateCreated: isoSeconds(log.dateCreated),
            fileName: f.fileName,
            repository: log.repository,
          })),
        };
      }
      return errorResponse(404, 'NOT_FOUND', `No GitOps log for entity ${entity.tag}`);
    },
  },
];
