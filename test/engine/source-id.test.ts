import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/engine/config.js';
import { deriveSourceId, normalizeRemoteUrl } from '../../src/engine/source-id.js';
import { gitConfigWithOrigin, removeDir, tempDir, writeFiles } from './helpers.js';

describe('normalizeRemoteUrl', () => {
  it.each([
    ['git@github.com:acme/catalog.git', 'github.com/acme/catalog'],
    ['git@github.com:acme/catalog', 'github.com/acme/catalog'],
    ['https://github.com/acme/catalog.git', 'github.com/acme/catalog'],
    ['https://github.com/acme/catalog', 'github.com/acme/catalog'],
    ['https://github.com/acme/catalog/', 'github.com/acme/catalog'],
    ['https://github.com/acme/catalog.git/', 'github.com/acme/catalog'],
    ['https://x-access-token:ghs_secret@github.com/acme/catalog.git', 'github.com/acme/catalog'],
    ['https://user@github.com/acme/catalog', 'github.com/acme/catalog'],
    ['ssh://git@github.com:22/acme/catalog.git', 'github.com/acme/catalog'],
    ['  HTTPS://GitHub.com/Acme/Catalog.git\n', 'github.com/acme/catalog'],
    ['git@gitlab.example.com:group/sub/catalog.git', 'gitlab.example.com/group/sub/catalog'],
    ['github.com:acme/catalog.git', 'github.com/acme/catalog'],
    ['my-host-alias:acme/catalog', 'my-host-alias/acme/catalog'],
  ])('%j → %s', (url, id) => {
    expect(normalizeRemoteUrl(url)).toBe(id);
  });

  it('never keeps credentials of an https remote in the id', () => {
    const id = normalizeRemoteUrl('https://bot:p4ssw0rd@github.com/acme/catalog.git');
    expect(id).not.toContain('p4ssw0rd');
    expect(id).not.toContain('bot');
  });

  it('gives no id for a remote without a repository path or that is not a URL', () => {
    expect(normalizeRemoteUrl('https://github.com/')).toBeUndefined();
    expect(normalizeRemoteUrl('not a url')).toBeUndefined();
  });
});

describe('deriveSourceId', () => {
  let root: string;
  beforeEach(async () => {
    root = await tempDir('cortex-sync-source-id-');
  });
  afterEach(() => removeDir(root));

  it('uses GITHUB_REPOSITORY in GitHub Actions, lower-cased, over any git remote', async () => {
    await writeFiles(root, { '.git/config': gitConfigWithOrigin('git@gitlab.com:other/repo.git') });
    expect(await deriveSourceId(root, { GITHUB_REPOSITORY: 'Acme/Catalog' })).toBe('github.com/acme/catalog');
  });

  it('reads the origin remote (not another remote) from .git/config in a parent directory', async () => {
    await writeFiles(root, {
      '.git/config': gitConfigWithOrigin('git@github.com:acme/catalog.git'),
      'services/payments/cortex.yaml': 'openapi: 3.0.1\n',
    });
    expect(await deriveSourceId(root, {})).toBe('github.com/acme/catalog');
  });

  it('gives each folder of a monorepo its own id; the repository root keeps the plain id', async () => {
    await writeFiles(root, { '.git/config': gitConfigWithOrigin('git@github.com:acme/catalog.git') });
    const teamA = await deriveSourceId(join(root, 'teamA'), {});
    const teamB = await deriveSourceId(join(root, 'teamB', 'services'), {});
    expect(teamA).toBe('github.com/acme/catalog//teamA');
    expect(teamB).toBe('github.com/acme/catalog//teamB/services');
    expect(await deriveSourceId(join(root, 'teamA'), { GITHUB_REPOSITORY: 'acme/catalog' })).toBe(teamA);
    expect(await deriveSourceId(root, { GITHUB_REPOSITORY: 'acme/catalog' })).toBe('github.com/acme/catalog');
  });

  it('in GitHub Actions without a .git, the folder is taken relative to GITHUB_WORKSPACE', async () => {
    const env = { GITHUB_REPOSITORY: 'acme/catalog', GITHUB_WORKSPACE: root };
    expect(await deriveSourceId(join(root, 'teamA'), env)).toBe('github.com/acme/catalog//teamA');
    expect(await deriveSourceId(root, env)).toBe('github.com/acme/catalog');
  });

  it('is undefined outside a git repository and for a repository without an origin remote', async () => {
    await writeFiles(root, { 'plain/cortex.yaml': 'openapi: 3.0.1\n' });
    expect(await deriveSourceId(join(root, 'plain'), {})).toBeUndefined();
    await writeFiles(root, { 'no-origin/.git/config': '[core]\n\tbare = false\n[remote "upstream"]\n\turl = x\n' });
    expect(await deriveSourceId(join(root, 'no-origin'), {})).toBeUndefined();
  });

  it('two checkouts of the same repository (ssh locally, https with a token in CI) get the same id', async () => {
    await writeFiles(root, {
      'laptop/catalog/.git/config': gitConfigWithOrigin('git@github.com:Acme/catalog.git'),
      'runner/_work/x/.git/config': gitConfigWithOrigin('https://x-access-token:tok@github.com/acme/catalog'),
    });
    const local = await deriveSourceId(join(root, 'laptop', 'catalog'), {});
    const ci = await deriveSourceId(join(root, 'runner', '_work', 'x'), {});
    const actions = await deriveSourceId(join(root, 'runner', '_work', 'x'), { GITHUB_REPOSITORY: 'acme/catalog' });
    expect(local).toBe('github.com/acme/catalog');
    expect(ci).toBe(local);
    expect(actions).toBe(local);
  });

  it("a submodule gets its own id, not the superproject's", async () => {
    await writeFiles(root, {
      '.git/config': gitConfigWithOrigin('git@github.com:acme/platform.git'),
      '.git/modules/catalog/config': gitConfigWithOrigin('git@github.com:acme/catalog.git'),
      'catalog/.git': 'gitdir: ../.git/modules/catalog\n',
    });
    expect(await deriveSourceId(join(root, 'catalog'), {})).toBe('github.com/acme/catalog');
  });

  it('a worktree gets the id of the repository it belongs to', async () => {
    await writeFiles(root, {
      'main/.git/config': gitConfigWithOrigin('git@github.com:acme/catalog.git'),
      'main/.git/worktrees/feature/commondir': '../..\n',
      'main/.git/worktrees/feature/HEAD': 'ref: refs/heads/feature\n',
      'feature/.git': `gitdir: ${join(root, 'main', '.git', 'worktrees', 'feature')}\n`,
    });
    expect(await deriveSourceId(join(root, 'feature'), {})).toBe('github.com/acme/catalog');
  });

  it('is what resolveConfig uses when no source id is configured', async () => {
    await writeFiles(root, { '.git/config': gitConfigWithOrigin('git@github.com:acme/catalog.git') });
    const derived = await resolveConfig({}, {}, root);
    expect(derived.config.sourceId).toBe('github.com/acme/catalog');
    await writeFiles(root, { 'cortex-sync.yaml': 'sourceId: platform-catalog\n' });
    const configured = await resolveConfig({}, {}, root);
    expect(configured.config.sourceId).toBe('platform-catalog');
  });
});
