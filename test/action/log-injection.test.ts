/**
 * Names, file names and messages a repository (or an API echoing them) controls never become
 * workflow commands or terminal escapes in the Action's log: the Action runs in-process with the
 * real `@actions/core` runtime, its stdout is captured, and every line the runner would read as a
 * command is checked to be one the Action meant to write.
 */
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { realEngine } from '../../src/action/engine.js';
import { printable } from '../../src/core/printable.js';
import { octokitGitHub } from '../../src/action/github.js';
import { runAction } from '../../src/action/run.js';
import { actionsCoreRuntime, logEngineEvents, logSafely } from '../../src/action/runtime.js';
import { EXAMPLES, type Emulator, removeDir, serviceYaml, startTestEmulator, tempDir } from '../e2e/harness.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github.js';
import { MERGE_SHA, PR_NUMBER, pullRequestPayload, pushPayload, REPOSITORY, TOKEN } from './harness.js';

const INJECTED = '::error file=.github/workflows/deploy.yml,line=3::Deploy key leaked';
const EVIL_NAME = `Readiness\n${INJECTED}`;
const ANSI = '\u001b[2K\u001b[1A';

let emulator: Emulator;
let github: FakeGitHub;
let root: string;
let workspace: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  github = await startFakeGitHub();
  root = await tempDir('cortex-sync-action-log-');
  workspace = join(root, 'repo');
  await mkdir(workspace);
  const catalog = join(workspace, 'catalog');
  await cp(EXAMPLES, catalog, { recursive: true });
  const initiative = [
    `name: ${JSON.stringify(EVIL_NAME)}`,
    `description: ${JSON.stringify(`Erases lines${ANSI}`)}`,
    'scorecardTag: production-readiness',
    'targetDate: "2030-12-31"',
    'isDraft: false',
    'emphasizedLevels:',
    '  - rank: 1',
    'emphasizedRules: []',
    'filter:',
    '  groups:',
    '    include: [tier-0]',
    '',
  ].join('\n');
  await writeFile(join(catalog, '.cortex/initiatives/evil.yaml'), initiative);
  // A file name with a line break and a command in it, and an unknown key (a warning quoting it).
  await writeFile(
    join(catalog, `.cortex/catalog/odd\n::warning::file name${ANSI}.yaml`),
    serviceYaml('odd-service', `  ${JSON.stringify(`x-cortex-\n::error::key${ANSI}`)}: 1\n`),
  );
  github.commits.set(MERGE_SHA, [{ number: PR_NUMBER, merged: true, mergeCommitSha: MERGE_SHA }]);
  // The API refuses the Initiative and echoes its name in the message.
  emulator.setFaults({
    reject: [{ method: 'POST', path: '/api/v1/initiatives', status: 400, message: `bad name ${EVIL_NAME}${ANSI}` }],
  });
});
afterEach(async () => {
  await emulator.stop();
  await github.stop();
  await removeDir(root);
});

/** One run with the real runner adapter; returns what it wrote to stdout. */
const runWithRealRuntime = async (eventName: 'pull_request' | 'push'): Promise<{ code: number; stdout: string }> => {
  const inputs: Record<string, string> = {
    INPUT_DIR: 'catalog',
    'INPUT_API-KEY': emulator.apiKey,
    'INPUT_GITHUB-TOKEN': TOKEN,
    'INPUT_ON-PLAN-DRIFT': 'apply',
  };
  const saved = Object.fromEntries(Object.keys(inputs).map((k) => [k, process.env[k]]));
  Object.assign(process.env, inputs);
  const summary = process.env.GITHUB_STEP_SUMMARY;
  const output = process.env.GITHUB_OUTPUT;
  delete process.env.GITHUB_STEP_SUMMARY; // the summary then goes to the log too
  delete process.env.GITHUB_OUTPUT;
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });
  try {
    const runtime = actionsCoreRuntime();
    const code = await runAction({
      runtime,
      env: {
        GITHUB_EVENT_NAME: eventName,
        GITHUB_REPOSITORY: REPOSITORY,
        GITHUB_WORKSPACE: workspace,
        GITHUB_API_URL: github.url,
        RUNNER_TEMP: join(root, 'runner-temp'),
        CORTEX_BASE_URL: emulator.url,
      },
      event: eventName === 'push' ? pushPayload() : pullRequestPayload(),
      engine: realEngine(new AbortController().signal, logEngineEvents(runtime)),
      cwd: workspace,
      github: (token, run) =>
        octokitGitHub({ token, apiUrl: github.url, repository: run.repository, userAgent: 'test' }),
    });
    return { code, stdout: chunks.join('') };
  } finally {
    spy.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    if (summary !== undefined) process.env.GITHUB_STEP_SUMMARY = summary;
    if (output !== undefined) process.env.GITHUB_OUTPUT = output;
  }
};

/** The lines the runner reads as workflow commands: those starting with `::`, outside a stop-commands block. */
const commandLines = (stdout: string): string[] => {
  const commands: string[] = [];
  let resumeToken: string | undefined;
  for (const line of stdout.split(/\r?\n/)) {
    if (resumeToken !== undefined) {
      if (line === `::${resumeToken}::`) resumeToken = undefined;
      continue;
    }
    if (!line.trimStart().startsWith('::')) continue;
    commands.push(line);
    const stop = /^::stop-commands::(.+)$/.exec(line);
    if (stop) resumeToken = stop[1];
  }
  return commands;
};

const OURS = /^::(add-mask|set-output|error|warning|notice|stop-commands)[ :]/;

describe('the Action log', () => {
  for (const eventName of ['pull_request', 'push'] as const) {
    it(`on ${eventName}: no name, file name or message starts a workflow command or writes an escape`, async () => {
      const { stdout } = await runWithRealRuntime(eventName);
      expect(stdout).toContain('Readiness'); // the name is in the log, printably
      const commands = commandLines(stdout);
      expect(commands.length).toBeGreaterThan(0);
      for (const line of commands) {
        expect(line).toMatch(OURS);
        expect(line.startsWith('::error file=.github')).toBe(false);
        expect(line.startsWith('::warning::file name')).toBe(false);
        expect(line.startsWith('::error::key')).toBe(false);
      }
      expect(stdout).not.toContain('\u001b');
      if (eventName === 'push') expect(stdout).toContain(`failed: create initiative/${printable(EVIL_NAME)}: `);
    });
  }

  it('writes a message of several lines between stop-commands and a random resume token', () => {
    const lines: string[] = [];
    logSafely(
      (l) => lines.push(l),
      `first\n${INJECTED}`,
      () => 'token-1',
    );
    expect(lines).toEqual(['::stop-commands::token-1', `first\n${INJECTED}`, '::token-1::']);
    const single: string[] = [];
    logSafely(
      (l) => single.push(l),
      `plain${ANSI}`,
      () => 'unused',
    );
    expect(single).toEqual(['plain\\x1b[2K\\x1b[1A']);
  });
});
