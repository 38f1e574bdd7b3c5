/**
 * In-process runs of the Action: the real engine against the emulator, the real octokit port
 * against the fake GitHub, and a runtime that records what the runner would get.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Engine, realEngine } from '../../src/action/engine.js';
import { octokitGitHub } from '../../src/action/github.js';
import { readPlanComment } from '../../src/action/markers.js';
import { runAction } from '../../src/action/run.js';
import type { ActionRuntime, Annotation } from '../../src/action/runtime.js';
import { NO_EVENTS } from '../../src/engine/context.js';
import { type Emulator, serviceYaml } from '../e2e/harness.js';
import type { FakeGitHub } from './fake-github.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');
export const PR_NUMBER = 7;
export const MERGE_SHA = '9d8c7b6a5f4e3d2c1b0a99887766554433221100';
export const REPOSITORY = 'example/catalog';
export const TOKEN = 'ghs_fakeTokenForTests0123456789';

type Json = Record<string, unknown>;
const fixture = (name: string): Json => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Json;

/** The recorded `pull_request` payload; `fork: true` makes its head another repository. */
export const pullRequestPayload = (options: { fork?: boolean; number?: number } = {}): Json => {
  const payload = fixture('pull_request.json');
  if (options.number !== undefined) {
    payload.number = options.number;
    (payload.pull_request as Json).number = options.number;
  }
  if (options.fork) {
    const pr = payload.pull_request as { head: { repo: Json; label: string } };
    pr.head.repo = { ...pr.head.repo, full_name: 'stranger/catalog', fork: true, owner: { login: 'stranger' } };
    pr.head.label = 'stranger:tier-0';
  }
  return payload;
};

export const pushPayload = (): Json => fixture('push.json');

/** The digest a plan comment's trailer records, as the merge reads it; undefined when it records none. */
export const reviewedDigest = (body: string): string | undefined => {
  const read = readPlanComment(body, body.split('\n')[0] ?? '');
  return read.status === 'reviewed' ? read.plan.digest : undefined;
};

export interface RecordingRuntime extends ActionRuntime {
  outputs: Map<string, string>;
  annotations: Annotation[];
  summaries: string[];
  log: string[];
  masked: string[];
}

export const recordingRuntime = (inputs: Record<string, string>): RecordingRuntime => {
  const runtime: RecordingRuntime = {
    outputs: new Map(),
    annotations: [],
    summaries: [],
    log: [],
    masked: [],
    input: (name) => (inputs[name] ?? '').trim(),
    setOutput: (name, value) => void runtime.outputs.set(name, value),
    annotate: (a) => void runtime.annotations.push(a),
    info: (m) => void runtime.log.push(m),
    mask: (s) => void runtime.masked.push(s),
    appendSummary: async (md) => void runtime.summaries.push(md),
  };
  return runtime;
};

export interface InProcessRun {
  code: number;
  runtime: RecordingRuntime;
  /** Every wait (ms) the GitHub port asked for before retrying; none is slept. */
  waits: number[];
}

/** One run of the Action for `eventName` with `payload`, in `workspace`. */
export const runInProcess = async (options: {
  eventName: 'pull_request' | 'push';
  payload: Json;
  workspace: string;
  emulator: Emulator;
  github: FakeGitHub;
  inputs?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** Wraps the real engine (e.g. to edit the workspace between the Action's check and the apply). */
  wrapEngine?: (engine: Engine) => Engine;
}): Promise<InProcessRun> => {
  const runtime = recordingRuntime({
    'api-key': options.emulator.apiKey,
    'github-token': TOKEN,
    ...options.inputs,
  });
  const env: NodeJS.ProcessEnv = {
    GITHUB_EVENT_NAME: options.eventName,
    GITHUB_REPOSITORY: REPOSITORY,
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_API_URL: options.github.url,
    GITHUB_RUN_ID: '4242',
    RUNNER_TEMP: join(options.workspace, '..', 'runner-temp'),
    CORTEX_BASE_URL: options.emulator.url,
    ...options.env,
  };
  const waits: number[] = [];
  const code = await runAction({
    runtime,
    env,
    event: options.payload,
    engine: (options.wrapEngine ?? ((engine) => engine))(realEngine(new AbortController().signal, NO_EVENTS)),
    cwd: options.workspace,
    github: (token, run, proxy) =>
      octokitGitHub({
        token,
        apiUrl: options.github.url,
        repository: run.repository,
        userAgent: 'test',
        ...(proxy ? { proxy } : {}),
        sleep: async (ms) => void waits.push(ms),
      }),
  });
  return { code, runtime, waits };
};

/** What someone does in the UI (or any other client of the API) between two runs. */
export const workspaceEdits = (emulator: Emulator) => {
  const call = async (method: string, path: string, body?: string): Promise<Response> =>
    fetch(`${emulator.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${emulator.apiKey}`,
        ...(body !== undefined ? { 'content-type': 'application/openapi;charset=UTF-8' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
    });
  const ok = async (response: Promise<Response>): Promise<void> => {
    const res = await response;
    if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  };
  return {
    createService: (tag: string) => ok(call('POST', '/api/v1/open-api', serviceYaml(tag))),
    /** Replaces an entity with this descriptor (its ownership marker is gone then). */
    postDescriptor: (yaml: string) => ok(call('POST', '/api/v1/open-api', yaml)),
    deleteEntity: (tag: string) => ok(call('DELETE', `/api/v1/catalog/${encodeURIComponent(tag)}`)),
    archiveEntity: (tag: string) => ok(call('PUT', `/api/v1/catalog/${encodeURIComponent(tag)}/archive`)),
    deleteCatalogPage: (slug: string) => ok(call('DELETE', `/api/v1/catalog-pages/${encodeURIComponent(slug)}`)),
    entityState: async (tag: string): Promise<'absent' | 'archived' | 'active'> => {
      const res = await call('GET', `/api/v1/catalog/${encodeURIComponent(tag)}`);
      if (res.status === 404) return 'absent';
      return ((await res.json()) as { isArchived?: boolean }).isArchived ? 'archived' : 'active';
    },
  };
};
