/**
 * A plan too large for a comment never hides what it removes: deletes and archives come first in
 * the plan comment and the job summary and are never cut; what is cut is the least important
 * (creates, then updates) with a count. The job summary fits GitHub's 1 MiB counted in bytes.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMENT_LIMIT } from '../../src/action/comment.js';
import { type Emulator, serviceYaml, writeFiles } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { summaryWriter } from '../../src/action/report.js';
import { PR_NUMBER, recordingRuntime, reviewedDigest } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

const recordingRuntimeFor = (parts: string[]) => ({
  ...recordingRuntime({}),
  appendSummary: async (md: string) => void parts.push(md),
});

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const run = (eventName: 'pull_request' | 'push', inputs: Record<string, string> = {}) =>
  runEvent({ emulator, github, workspace }, eventName, inputs);

const MIB = 1024 * 1024;
// Three bytes per character in UTF-8: 1,500 of these are far under 1 M characters, far over 1 MiB.
const CJK = '服务目录中的支付接口说明'.repeat(40);

describe('a plan of 1,500 creates and one archive', () => {
  it('names the archived entity first in the comment and the summary, and the summary fits 1 MiB in bytes', async () => {
    expect((await run('push', { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
    await rm(join(workspace, 'catalog', '.cortex/catalog/notifications.yaml'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i += 1) {
      const tag = `svc-${String(i).padStart(4, '0')}`;
      files[`.cortex/catalog/${tag}.yaml`] = serviceYaml(tag, `  description: ${CJK}\n`);
    }
    await writeFiles(join(workspace, 'catalog'), files);

    const plan = await run('pull_request', { prune: 'true' });
    expect(plan.code).toBe(0);
    expect(plan.runtime.outputs.get('archive')).toBe('1');

    const body = github.comments.find((c) => c.issue === PR_NUMBER)?.body ?? '';
    expect(body.length).toBeLessThan(COMMENT_LIMIT);
    expect(reviewedDigest(body)).toMatch(/^sha256:/);
    const archived = body.indexOf('archive `notifications`');
    expect(archived).toBeGreaterThan(0);
    expect(archived).toBeLessThan(body.indexOf('create `svc-'));
    expect(body).toMatch(/\d+ creates? not shown/);

    const summary = plan.runtime.summaries.join('\n');
    expect(Buffer.byteLength(summary, 'utf8')).toBeLessThanOrEqual(MIB);
    const inSummary = summary.indexOf('archive `notifications`');
    expect(inSummary).toBeGreaterThan(0);
    expect(inSummary).toBeLessThan(summary.indexOf('`svc-'));
  }, 120_000);
});

describe('the job summary', () => {
  it('never passes 1 MiB in bytes over several parts: the part that would is cut with a note, whole characters kept', async () => {
    const parts: string[] = [];
    const write = summaryWriter(recordingRuntimeFor(parts), (s) => s);
    await write('é'.repeat(300_000)); // 600,000 bytes
    await write('€'.repeat(300_000)); // 900,000 bytes: over
    await write('and more');
    const all = parts.join('');
    expect(Buffer.byteLength(all, 'utf8')).toBeLessThanOrEqual(MIB);
    expect(parts).toHaveLength(2);
    expect(parts[1]).toMatch(/€\n\n> \[!NOTE\]\n> Cut here: GitHub keeps at most 1 MiB/);
    expect(all).not.toContain('\uFFFD');
  });
});
