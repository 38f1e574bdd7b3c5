/**
 * Routing a push to the sources it names: a repository written any way GitHub sends it (https,
 * ssh, scp-like, with or without `.git`, credentials or case in the host), and its branch (the
 * repository's default branch for a source that names none).
 */
import { expect, it } from 'vitest';
import { WatchMetrics } from '../../src/watch/metrics.js';
import { repositoryKey, routePush, type ServedSource } from '../../src/watch/sources-http.js';

const source = (name: string, repo: string, branch?: string): ServedSource => ({
  entry: { name, repo, ...(branch ? { branch } : {}), line: 1 },
  metrics: new WatchMetrics(),
});

const push = (ref: string, repository: Record<string, string>) =>
  Buffer.from(JSON.stringify({ ref, after: 'abc', repository }));

it('knows one repository in every spelling', () => {
  const key = 'github.com/acme/catalog';
  for (const url of [
    'https://github.com/acme/catalog.git',
    'https://user:token@GitHub.com/acme/catalog',
    'ssh://git@github.com/acme/catalog.git',
    'git@github.com:acme/catalog.git',
    'git://github.com/acme/catalog.git',
    'https://github.com/acme/catalog/',
  ])
    expect(repositoryKey(url), url).toBe(key);
  expect(repositoryKey('https://github.com/acme/catalog-2.git')).not.toBe(key);
  expect(repositoryKey('https://gitlab.com/acme/catalog.git')).not.toBe(key);
});

it('triggers the sources of the pushed repository and branch, and no other', () => {
  const sources = [
    source('main', 'git@github.com:acme/catalog.git', 'main'),
    source('default', 'https://github.com/acme/catalog.git'),
    source('release', 'https://github.com/acme/catalog.git', 'release'),
    source('other', 'https://github.com/acme/other.git', 'main'),
  ];
  const repository = { clone_url: 'https://github.com/acme/catalog.git', default_branch: 'main' };
  expect(routePush('push', push('refs/heads/main', repository), sources)).toEqual({
    trigger: true,
    revision: 'abc',
    sources: ['main', 'default'],
  });
  expect(routePush('push', push('refs/heads/release', repository), sources)).toMatchObject({ sources: ['release'] });
  expect(routePush('push', push('refs/heads/feature', repository), sources)).toMatchObject({
    trigger: false,
    status: 202,
  });
  expect(routePush('push', push('refs/tags/v1', repository), sources)).toMatchObject({ trigger: false });
  // A look-alike repository name triggers nothing.
  expect(
    routePush('push', push('refs/heads/main', { clone_url: 'https://github.com/acme/catalog-evil.git' }), sources),
  ).toMatchObject({ trigger: false });
  expect(routePush('push', Buffer.from('not json'), sources)).toMatchObject({ trigger: false, status: 400 });
  expect(routePush('ping', Buffer.from('{}'), sources)).toMatchObject({ trigger: false, status: 200 });
});
