/**
 * Look-alike ids in one plan: a pull request that renames `payments-api`'s manifest to
 * `payments‑api` (U+2011, a non-breaking hyphen) reads as a file move, but creates a new entity and
 * archives the real one. Both changes are flagged beside them, in the plan comment (Markdown), the
 * job summary and the text plan, with the look-alike's code points shown.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderPlanText } from '../../src/render/text.js';
import type { Plan } from '../../src/core/model.js';
import { type Emulator } from '../e2e/harness.js';
import { type FakeGitHub } from './fake-github.js';
import { PR_NUMBER } from './harness.js';
import { runEvent, useActionWorld } from './world.js';

let emulator: Emulator;
let github: FakeGitHub;
let workspace: string;
useActionWorld((world) => ({ emulator, github, workspace } = world));

const run = (eventName: 'pull_request' | 'push', inputs: Record<string, string> = {}) =>
  runEvent({ emulator, github, workspace }, eventName, { prune: 'true', ...inputs });

const LOOKALIKE = 'payments\u2011api';
const catalogFile = (name: string) => join(workspace, 'catalog', '.cortex', 'catalog', name);

describe('a create and an archive whose ids look alike', () => {
  it('are flagged beside each change in the plan comment, the job summary and the text plan', async () => {
    expect((await run('push', { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
    const original = await readFile(catalogFile('payments-api.yaml'), 'utf8');
    await rm(catalogFile('payments-api.yaml'));
    await writeFile(catalogFile(`${LOOKALIKE}.yaml`), original.replaceAll('payments-api', LOOKALIKE));

    const plan = await run('pull_request');
    expect(plan.code).toBe(0);
    expect(plan.runtime.outputs.get('archive')).toBe('1');
    const comment = github.comments.find((c) => c.issue === PR_NUMBER)?.body ?? '';
    // The archive, listed first, says what it looks like, with the code point shown.
    const archiveLine = comment.split('\n').find((l) => l.startsWith('- 🟣 archive `payments-api`')) ?? '';
    expect(archiveLine).toContain('⚠️');
    expect(archiveLine).toContain(`\`${LOOKALIKE}\` \\(create; U+2011\\)`);
    // The create's section carries the warning right under its heading.
    const createAt = comment.indexOf(`#### 🟢 create \`${LOOKALIKE}\``);
    expect(createAt).toBeGreaterThan(0);
    expect(comment.slice(createAt).split('\n').slice(2, 4).join('\n')).toMatch(
      new RegExp(
        `> \\[!WARNING\\]\n> ⚠️ entity \`${LOOKALIKE}\` \\\\\\(create; U\\+2011\\\\\\) looks like \`payments-api\` \\\\\\(archive\\\\\\)`,
      ),
    );
    const summary = plan.runtime.summaries.join('\n');
    expect(summary).toContain(`\`${LOOKALIKE}\` ⚠️ look-alike |`);

    const json = JSON.parse(await readFile(plan.runtime.outputs.get('plan-json') ?? '', 'utf8')) as Plan;
    const text = renderPlanText({ ...json, diagnostics: json.diagnostics ?? [] }, { color: false });
    const lines = text.split('\n');
    const archiveAt = lines.findIndex((l) => l.includes('! archive entity/payments-api'));
    expect(archiveAt).toBeGreaterThanOrEqual(0);
    expect(lines.slice(archiveAt + 1, archiveAt + 3).join('\n')).toContain(
      `⚠ entity \`payments-api\` (archive) looks like \`${LOOKALIKE}\` (create; U+2011)`,
    );
  });

  it('a look-alike of an unchanged object, both declared: flagged beside the create by the load warning; other ids are not', async () => {
    expect((await run('push', { 'on-plan-drift': 'apply', comment: 'false' })).code).toBe(0);
    const original = await readFile(catalogFile('payments-api.yaml'), 'utf8');
    await writeFile(catalogFile(`${LOOKALIKE}.yaml`), original.replaceAll('payments-api', LOOKALIKE));
    const plan = await run('pull_request');
    expect(plan.code).toBe(0);
    const comment = github.comments.find((c) => c.issue === PR_NUMBER)?.body ?? '';
    const createAt = comment.indexOf(`#### 🟢 create \`${LOOKALIKE}\``);
    expect(createAt).toBeGreaterThan(0);
    expect(comment.slice(createAt).split('\n').slice(2, 4).join('\n')).toMatch(/> \[!WARNING\]\n> ⚠️ .*look alike/);
    expect(comment.match(/> ⚠️/g)).toHaveLength(1);
  });
});
