/**
 * The origin a source id is bound to: the same for every clone of one repository (ssh, https, a
 * token in the URL, CI or a laptop), different for another repository or another folder of it,
 * never holding a credential; a folder outside git is its own path. From the operator's world only.
 */
import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/engine/config.js';
import { deriveOrigin, MAX_ORIGIN_LENGTH } from '../../src/engine/source-id.js';
import { gitConfigWithOrigin, removeDir, tempDir, writeFiles } from './helpers.js';

let root: string;
beforeEach(async () => {
  root = await tempDir('cortex-sync-origin-');
});
afterEach(() => removeDir(root));

const originOfRemote = async (url: string, env: NodeJS.ProcessEnv = {}, sub = ''): Promise<string> => {
  await writeFiles(root, { '.git/config': gitConfigWithOrigin(url) });
  if (sub) await mkdir(join(root, sub), { recursive: true });
  return deriveOrigin(join(root, sub), env);
};

describe('deriveOrigin', () => {
  it.each([
    'git@github.com:Acme/Catalog.git',
    'https://github.com/acme/catalog',
    'https://x-access-token:ghs_secret123@github.com/acme/catalog.git',
    'https://oauth2:glpat-secret@github.com/acme/catalog/',
    'ssh://git@github.com:22/acme/catalog.git',
    'https://github.com/acme/catalog.git?token=secret#frag',
  ])('every clone of one repository is one origin, and no credential is kept: %s', async (url) => {
    const origin = await originOfRemote(url);
    expect(origin).toBe('github.com/acme/catalog');
  });

  it('a remote git would read as host:path with a token before an @ keeps nothing before the @', async () => {
    const origin = await originOfRemote('x-access-token:ghs_secret123@github.com/acme/catalog');
    expect(origin).not.toContain('ghs_secret123');
    expect(origin).not.toContain('x-access-token');
  });

  it('GitHub Actions: GITHUB_REPOSITORY on GITHUB_SERVER_URL’s host, the same as a clone of that server', async () => {
    expect(await originOfRemote('git@github.com:someone/fork.git', { GITHUB_REPOSITORY: 'Acme/Catalog' })).toBe(
      'github.com/acme/catalog',
    );
    expect(
      await originOfRemote('git@ghe.example.com:acme/catalog.git', {
        GITHUB_REPOSITORY: 'acme/catalog',
        GITHUB_SERVER_URL: 'https://GHE.example.com',
      }),
    ).toBe('ghe.example.com/acme/catalog');
    expect(await originOfRemote('git@ghe.example.com:acme/catalog.git')).toBe('ghe.example.com/acme/catalog');
  });

  it('a folder of the repository is an origin of its own (the same folder in any clone)', async () => {
    expect(await originOfRemote('git@github.com:acme/mono.git', {}, 'teams/a')).toBe('github.com/acme/mono//teams/a');
  });

  it('outside git: path: and the manifest root’s absolute path as given (a symlink flipped to each revision stays one origin)', async () => {
    await mkdir(join(root, 'rev-1'));
    await mkdir(join(root, 'rev-2'));
    await symlink(join(root, 'rev-1'), join(root, 'current'));
    const origin = await deriveOrigin(join(root, 'current'), {});
    expect(origin).toBe(`path:${join(root, 'current')}`);
    await rm(join(root, 'current'));
    await symlink(join(root, 'rev-2'), join(root, 'current'));
    expect(await deriveOrigin(join(root, 'current'), {})).toBe(origin);
    expect(await deriveOrigin(join(root, 'rev-1'), {})).not.toBe(origin);
  });

  it('one remote not named origin is the repository; several and none named origin are not guessed', async () => {
    await writeFiles(root, { '.git/config': '[remote "github"]\n\turl = git@github.com:acme/catalog.git\n' });
    expect(await deriveOrigin(root, {})).toBe('github.com/acme/catalog');
    await writeFiles(root, {
      '.git/config':
        '[remote "github"]\n\turl = git@github.com:acme/catalog.git\n[remote "fork"]\n\turl = git@github.com:me/catalog.git\n',
    });
    expect(await deriveOrigin(root, {})).toBe(`path:${root}`);
  });

  it('a very long origin is cut with a hash of the whole (two long ones stay apart)', async () => {
    const long = (end: string) => `https://github.com/acme/${'x'.repeat(400)}${end}`;
    const a = await originOfRemote(long('a'));
    const b = await originOfRemote(long('b'));
    expect(a.length).toBeLessThanOrEqual(MAX_ORIGIN_LENGTH);
    expect(a).not.toBe(b);
  });

  it('cortex-sync.yaml cannot set it; CORTEX_SYNC_ORIGIN (the operator) can', async () => {
    await writeFiles(root, {
      '.git/config': gitConfigWithOrigin('git@github.com:acme/catalog.git'),
      'cortex-sync.yaml': 'origin: github.com/acme/other\n',
    });
    const fromFile = await resolveConfig({}, {}, root);
    expect(fromFile.diagnostics.map((d) => d.message).join('\n')).toMatch(/origin/);
    await writeFiles(root, { 'cortex-sync.yaml': 'sourceId: catalog\n' });
    expect((await resolveConfig({}, {}, root)).config.origin).toBe('github.com/acme/catalog');
    expect((await resolveConfig({}, { CORTEX_SYNC_ORIGIN: ' ci/catalog ' }, root)).config.origin).toBe('ci/catalog');
  });
});
