/**
 * `export` on a workspace made in the UI: the plan on what it wrote has nothing to change but
 * taking the objects under management, `apply` adopts everything without creating anything, and a
 * prune after deleting one exported file archives exactly that entity.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manifestBaseName } from '../../../src/kinds/shared/file-name.js';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir, writesSince } from '../../e2e/harness.js';
import { callApi, listManifestFiles, type PlanJson, readTree, seedWorkspace } from '../../export/helpers.js';

let emulator: Emulator;
let out: string;

beforeEach(async () => {
  emulator = await startTestEmulator();
  await seedWorkspace(emulator);
  out = await tempDir('cortex-sync-export-');
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(out);
});

const planJson = async (dir: string, extra: string[] = []): Promise<PlanJson> => {
  const run = await cli(['plan', '--dir', dir, '--output', 'json', ...extra], { emulator, cwd: dir });
  expect(run.stderr).not.toMatch(/error/i);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as PlanJson;
};

describe('export round trip', () => {
  it('writes every kind in the layout, and plan, apply and prune on the result behave', async () => {
    const run = await cli(['export', '--out', out, '--source-id', 'catalog-repo'], { emulator, cwd: out });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const web = manifestBaseName('@acme/web.app');
    const bot = manifestBaseName('team/support-bot');
    expect(await listManifestFiles(out)).toEqual(
      [
        '.cortex/catalog-pages/agents.yaml',
        `.cortex/catalog/${bot}.yaml`,
        `.cortex/catalog/${web}.yaml`,
        '.cortex/catalog/ledger.yaml',
        `.cortex/dependencies/${bot}.yaml`,
        `.cortex/dependencies/${web}.yaml`,
        '.cortex/domains/money.yaml',
        '.cortex/domains/payments.domain.yaml',
        '.cortex/entity-types/ai-agent.yaml',
        `.cortex/initiatives/${manifestBaseName('Agents ready')}.yaml`,
        '.cortex/scaffolders/agent-template.yaml',
        // The emulator's sample scorecards: nobody manages them, and an export writes every kind.
        '.cortex/scorecards/production-readiness.yaml',
        '.cortex/scorecards/security-baseline.yaml',
        '.cortex/teams/platform-team.yaml',
        'cortex-sync.yaml',
      ].sort(),
    );
    const tree = await readTree(out);
    // The descriptor-declared edge stays in the descriptor; only the API edge is exported.
    expect(tree.get(`.cortex/dependencies/${web}.yaml`)).toContain('path: /v1/balance');
    expect(tree.get(`.cortex/dependencies/${web}.yaml`)).not.toContain('/v1/entries');
    // The server-inferred type and empty Scaffolder labels are left out, its flags written as the
    // server answers them; the draft stays a draft.
    expect(tree.get('.cortex/catalog-pages/agents.yaml')).not.toContain('type:');
    expect(tree.get('.cortex/scaffolders/agent-template.yaml')).not.toContain('labels');
    expect(tree.get('.cortex/scaffolders/agent-template.yaml')).toContain('requirePullRequest: false');
    expect(tree.get(`.cortex/initiatives/${manifestBaseName('Agents ready')}.yaml`)).toContain('isDraft: true');
    for (const [file, text] of tree) {
      if (file === 'cortex-sync.yaml' || file.startsWith('.cortex-sync-schemas/')) continue;
      expect(text.split('\n')[0], file).toMatch(/^# yaml-language-server: \$schema=\S+\.schema\.json$/);
      expect(text, file).not.toMatch(/cortex-sync:|cid:|dateCreated|\ben[0-9a-f]{6,}/);
    }

    // Plan: nothing to create, change or remove; every object is only taken under management
    // (and the ownership record of this repository is written for the kinds without a marker).
    const plan = await planJson(out);
    expect(plan.summary).toMatchObject({ create: 0, delete: 0, archive: 0 });
    const objects = plan.changes.filter((c) => c.kind !== 'inventory');
    expect(objects.length).toBe(14);
    for (const change of objects) {
      expect(change.diff, `${change.kind} ${change.id}`).toEqual([]);
      expect(change.action === 'noop' || change.adopt === true, `${change.kind} ${change.id}`).toBe(true);
    }

    // Apply adopts everything without a create; then the plan is all noop.
    const before = emulator.requests.length;
    const apply = await cli(['apply', '--dir', out, '--output', 'json'], { emulator, cwd: out });
    expect(apply.code).toBe(0);
    expect((JSON.parse(apply.stdout) as PlanJson).summary.create).toBe(0);
    const writes = writesSince(emulator, before);
    expect(writes.filter((w) => w.method === 'DELETE')).toEqual([]);
    expect(writes.some((w) => w.path === '/api/v1/initiatives')).toBe(false);
    const after = await planJson(out, ['--detailed-exitcode']);
    expect(after.summary).toMatchObject({ create: 0, update: 0, delete: 0, archive: 0, noop: 14 });
    expect(after.changes.filter((c) => c.action !== 'noop')).toEqual([]);

    // Deleting one exported entity file and pruning archives exactly that entity.
    await rm(join(out, '.cortex/catalog/ledger.yaml'));
    await rm(join(out, `.cortex/dependencies/${web}.yaml`));
    await writeFile(join(out, 'cortex-sync.yaml'), 'sourceId: catalog-repo\nmaxDeleteShare: 1\n');
    const prune = await cli(['apply', '--dir', out, '--prune', '--output', 'json', '--allow-mass-delete'], {
      emulator,
      cwd: out,
    });
    expect(prune.code).toBe(0);
    const pruned = (JSON.parse(prune.stdout) as PlanJson).changes.filter(
      (c) => c.action !== 'noop' && c.kind !== 'inventory',
    );
    expect(pruned.map((c) => `${c.action} ${c.kind} ${c.id}`).sort()).toEqual([
      'archive entity ledger',
      'delete dependency @acme/web.app→ledger GET /v1/balance',
    ]);
    const ledger = Object.values(emulator.state.entities.byId).find((e) => e.tag === 'ledger');
    expect(ledger?.isArchived).toBe(true);
    expect(
      Object.values(emulator.state.entities.byId)
        .filter((e) => e.isArchived)
        .map((e) => e.tag)
        .sort(),
    ).toEqual(['ledger', 'old-service']);
  });
});

describe('export on a server whose defaults no code knows', () => {
  it('keeps every icon and flag as the server answers it: the plan is empty, and a chosen one is defended', async () => {
    // The seeded `ai-agent` type was sent no icon: this server's default is one the code never guessed.
    emulator.state.entityTypes.byType['ai-agent']!.iconTag = 'Cortex-builtin::Hexagon';
    // A user chose the icon the code used to take for the default.
    await callApi(emulator, 'POST', '/api/v1/catalog/definitions', {
      type: 'stream',
      name: 'Stream',
      iconTag: 'Cortex-builtin::Box',
      schema: {},
    });
    const kinds = ['--kinds', 'entity-type,scaffolder-template'];
    const run = await cli(['export', '--out', out, '--source-id', 'catalog-repo', ...kinds], { emulator, cwd: out });
    expect(run.code).toBe(0);
    const tree = await readTree(out);
    expect(tree.get('.cortex/entity-types/stream.yaml')).toContain('iconTag: Cortex-builtin::Box');
    expect(tree.get('.cortex/entity-types/ai-agent.yaml')).toContain('iconTag: Cortex-builtin::Hexagon');
    expect(tree.get('.cortex/scaffolders/agent-template.yaml')).toContain('requirePullRequest: false');

    const plan = await planJson(out);
    const objects = plan.changes.filter((c) => c.kind !== 'inventory');
    expect(objects.map((c) => `${c.kind} ${c.id}`).sort()).toEqual([
      'entity-type ai-agent',
      'entity-type stream',
      'scaffolder-template agent-template',
    ]);
    for (const change of objects) expect(change.diff, `${change.kind} ${change.id}`).toEqual([]);
    expect((await cli(['apply', '--dir', out], { emulator, cwd: out })).code).toBe(0);
    expect((await planJson(out)).changes.filter((c) => c.action !== 'noop')).toEqual([]);

    // Changed in the UI: the manifests state the chosen values, so the plan sees it and apply puts them back.
    emulator.state.entityTypes.byType.stream!.iconTag = 'Cortex-builtin::Robot';
    emulator.state.scaffolders.items.find((t) => t.tag === 'agent-template')!.requirePullRequest = true;
    const drift = await planJson(out);
    expect(drift.changes.filter((c) => c.action !== 'noop').map((c) => `${c.action} ${c.kind} ${c.id}`)).toEqual([
      'update entity-type stream',
      'update scaffolder-template agent-template',
    ]);
    expect((await cli(['apply', '--dir', out], { emulator, cwd: out })).code).toBe(0);
    expect(emulator.state.entityTypes.byType.stream!.iconTag).toBe('Cortex-builtin::Box');
    expect(emulator.state.scaffolders.items.find((t) => t.tag === 'agent-template')!.requirePullRequest).toBe(false);
  });
});

describe('export without --source-id of what a repository applied', () => {
  /** Applies two entities and an edge as source `repo-x` from a folder of its own; `env` says its origin. */
  const applyRepoX = async (env: Record<string, string>): Promise<string> => {
    const repo = await tempDir('cortex-sync-export-repo-');
    await writeFile(join(repo, 'cortex-sync.yaml'), 'sourceId: repo-x\n');
    const files: Record<string, string> = {
      '.cortex/catalog/alpha.yaml':
        'openapi: 3.0.1\ninfo:\n  title: Alpha\n  x-cortex-tag: alpha\n  x-cortex-type: service\n',
      '.cortex/catalog/beta.yaml':
        'openapi: 3.0.1\ninfo:\n  title: Beta\n  x-cortex-tag: beta\n  x-cortex-type: service\n',
      '.cortex/dependencies/alpha.yaml': 'callerTag: alpha\ndependencies:\n  - tag: beta\n',
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(repo, path)), { recursive: true });
      await writeFile(join(repo, path), text);
    }
    expect((await cli(['apply', '--dir', '.'], { emulator, cwd: repo, env })).code).toBe(0);
    return repo;
  };
  const kinds = ['--kinds', 'entity,dependency'];

  it('from the origin the source is bound to (a checkout of the same repository): claims it, and the plan has no change', async () => {
    emulator.reset();
    const sameRepository = { CORTEX_SYNC_ORIGIN: 'github.com/acme/catalog' };
    const repo = await applyRepoX(sameRepository);
    try {
      const run = await cli(['export', '--out', out, '--only', 'all', ...kinds], {
        emulator,
        cwd: out,
        env: sameRepository,
      });
      expect(run.stderr).not.toMatch(/error/i);
      expect(run.code).toBe(0);
      expect(await readFile(join(out, 'cortex-sync.yaml'), 'utf8')).toMatch(/^sourceId: repo-x$/m);
      expect(run.stdout).toMatch(/cortex-sync\.yaml.*repo-x/);
      // Counts with their plural: two entities, one edge, three files.
      expect(run.stdout).toContain(`Exported 2 entities, 1 dependency in 3 files to ${out}.`);

      const plan = await cli(['plan', '--dir', '.', '--detailed-exitcode'], {
        emulator,
        cwd: out,
        env: sameRepository,
      });
      expect(plan.stderr).not.toMatch(/ownership-conflict|source-claimed|managed-elsewhere/);
      expect(plan.code).toBe(0);
      expect(plan.stdout).toContain('No changes.');
    } finally {
      await removeDir(repo);
    }
  });

  it('from anywhere else: claims nothing, says whose the objects are, and the plan shows them unchanged and left alone', async () => {
    emulator.reset();
    const repo = await applyRepoX({});
    try {
      const run = await cli(['export', '--out', out, '--only', 'all', ...kinds], { emulator, cwd: out });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Exported 2 entities, 1 dependency in 3 files to ${out}.`);
      await expect(readFile(join(out, 'cortex-sync.yaml'), 'utf8')).rejects.toThrow(/ENOENT/);
      expect(run.stdout).toMatch(
        /managed by source `repo-x`, bound to origin `path:.*`; this directory \(origin `path:.*`\) does not claim it.*--source-id repo-x --allow-takeover/,
      );

      const plan = await cli(['plan', '--dir', '.', '--detailed-exitcode'], { emulator, cwd: out });
      expect(plan.stderr).not.toMatch(/^error/m);
      expect(plan.stderr).toMatch(/^warning: 3 objects declared here are managed by source `repo-x`/m);
      expect(plan.code).toBe(0);
      expect(plan.stdout).toContain('No changes.');
      // Claiming the source from here is refused: the repository that applied it keeps it.
      await writeFile(join(out, 'cortex-sync.yaml'), 'sourceId: repo-x\n');
      const claimed = await cli(['plan', '--dir', '.'], { emulator, cwd: out });
      expect(claimed.code).toBe(1);
      expect(claimed.stderr).toMatch(/source-claimed/);
    } finally {
      await removeDir(repo);
    }
  });
});
