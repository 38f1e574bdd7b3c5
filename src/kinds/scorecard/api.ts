/**
 * Scorecard API calls. A scorecard is written whole, as the vendor's descriptor YAML, with
 * `POST /api/v1/scorecards/descriptor` (an upsert by tag: safe to retry) and read back with
 * `GET /api/v1/scorecards/{tag}/descriptor`, whose answer is that YAML (the vendor types it as a
 * JSON string; a server may also answer the text itself, or the object).
 */
import { parse as parseYaml, stringify } from 'yaml';
import { z } from 'zod';
import type { ApiClient } from '../../api/types.js';
import { encodePathSegment } from '../../api/types.js';
import { CortexSyncError } from '../../core/errors.js';
import type { JsonObject } from '../../core/model.js';
import { parseAnswer, readPagedList } from '../shared/api-reads.js';
import { type LiveScorecard, liveScorecardSchema, type ScorecardManifest } from './schema.js';

const SCORECARDS_PATH = '/api/v1/scorecards';

/** The content type the vendor's OpenAPI gives the descriptor endpoint (its CLI and Terraform provider send it). */
const DESCRIPTOR_CONTENT_TYPE = 'application/yaml;charset=UTF-8';

/** Aliases a descriptor the server answers may expand (the manifest loader's own limit). */
const MAX_ALIASES = 100;

/** A scorecard as the list shows it: enough to know it exists. */
export interface ListedScorecard {
  tag: string;
  name?: string;
  isDraft?: boolean;
}

/** A scorecard as the list answers it: its tag; a name or draft flag of another type reads as absent. */
const listedScorecardSchema = z.looseObject({
  tag: z.string().min(1),
  name: z.string().optional().catch(undefined),
  isDraft: z.boolean().optional().catch(undefined),
});

/** Every scorecard's tag. Drafts are asked for: without them a draft would look absent and be written again. */
export const listScorecards = async (client: ApiClient): Promise<ListedScorecard[]> => {
  const items = await readPagedList(client, {
    request: { operation: 'list scorecards', method: 'GET', path: SCORECARDS_PATH, query: { showDrafts: true } },
    list: 'scorecards',
    item: listedScorecardSchema,
    itemName: 'a scorecard',
  });
  return items.map(({ tag, name, isDraft }) => ({
    tag,
    ...(name !== undefined ? { name } : {}),
    ...(isDraft !== undefined ? { isDraft } : {}),
  }));
};

/** The descriptor in an answer: YAML text (bare or as a JSON string), or the object itself. */
const descriptorValue = (body: unknown, tag: string): unknown => {
  if (typeof body !== 'string') return body;
  try {
    return parseYaml(body, { maxAliasCount: MAX_ALIASES });
  } catch (error) {
    throw new CortexSyncError(
      'API',
      `read scorecard ${tag}: the descriptor answered is not YAML (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    );
  }
};

/** The scorecard `tag` as its descriptor says, or undefined when there is none (404). */
export const readDescriptor = async (client: ApiClient, tag: string): Promise<LiveScorecard | undefined> => {
  const res = await client.request<unknown>({
    operation: `read scorecard ${tag}`,
    method: 'GET',
    path: `${SCORECARDS_PATH}/${encodePathSegment(tag)}/descriptor`,
    acceptStatus: [404],
  });
  if (res.status === 404) return undefined;
  return parseAnswer(
    liveScorecardSchema,
    descriptorValue(res.body, tag),
    `read scorecard ${tag}: the descriptor answered cannot be read`,
  );
};

/**
 * The YAML `POST /api/v1/scorecards/descriptor` takes: the manifest as validated, in its own key
 * order, written for a YAML 1.1 reader (strings 1.1 would retype, such as `yes` or `0777`, are
 * quoted) and without line folding.
 */
const descriptorYaml = (spec: ScorecardManifest): string =>
  stringify(JSON.parse(JSON.stringify(spec)) as JsonObject, { version: '1.1', lineWidth: 0, minContentWidth: 0 });

/**
 * Creates the scorecard, or replaces the one with its tag. An upsert by tag, so a retry after a
 * timeout or a 5xx (an evaluation in progress refuses writes with a 500) changes nothing twice:
 * the client retries it with backoff.
 */
export const upsertScorecard = async (client: ApiClient, spec: ScorecardManifest): Promise<void> => {
  await client.request({
    operation: `upsert scorecard ${spec.tag}`,
    method: 'POST',
    path: `${SCORECARDS_PATH}/descriptor`,
    body: descriptorYaml(spec),
    contentType: DESCRIPTOR_CONTENT_TYPE,
    idempotent: true,
  });
};

/** Deletes the scorecard; one already gone counts as deleted. */
export const deleteScorecard = async (client: ApiClient, tag: string): Promise<void> => {
  await client.request({
    operation: `delete scorecard ${tag}`,
    method: 'DELETE',
    path: `${SCORECARDS_PATH}/${encodePathSegment(tag)}`,
    idempotent: true,
    acceptStatus: [404],
  });
};
