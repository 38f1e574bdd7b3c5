/**
 * What the absence suites share (`absence.test.ts`, `absence-attacks.test.ts`): an emulator per
 * test, checkouts of a repository with a scorecard and an Initiative, and reads of what the
 * emulator holds and was sent. `dropFromLists` leaves an object out of list answers
 * (the emulator's fault), so a test can show a short list is never taken for absence.
 */
import { afterEach, beforeEach } from 'vitest';
import type { RunningEmulator } from '../../packages/emulator/src/server.js';
import { inventoryTag } from '../../src/kinds/entity/records/inventory.js';
import { API_KEY, removeDir, startTestEmulator, tempDir, writeFiles } from '../cli/run.js';

export const SOURCE = 'absence-test';
export const INITIATIVE = 'Kill2 test 3';

export const scorecard = (description = 'The bar') => `tag: readiness
name: Readiness
description: ${description}
ladder:
  levels:
    - name: Gold
      rank: 1
      color: "#FFD700"
rules:
  - title: Has git
    expression: git != null
    level: Gold
`;
export const initiative = (name: string, description = 'Reach Gold') => `name: ${name}
description: ${description}
scorecardTag: readiness
targetDate: "2030-12-31"
isDraft: false
emphasizedLevels:
  - rank: 1
`;

/** Registers the per-test emulator and temporary folders; returns what the tests use. */
export const absenceWorld = () => {
  let current: RunningEmulator | undefined;
  const dirs: string[] = [];
  beforeEach(async () => {
    current = await startTestEmulator();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
    await Promise.all(dirs.splice(0).map(removeDir));
  });
  const emulator = (): RunningEmulator => {
    if (current === undefined) throw new Error('no emulator outside a test');
    return current;
  };

  /** A checkout of `remote` holding `files`. */
  const checkout = async (remote: string, files: Record<string, string>): Promise<string> => {
    const dir = await tempDir();
    dirs.push(dir);
    await writeFiles(dir, { '.git/config': `[remote "origin"]\n\turl = ${remote}\n`, ...files });
    return dir;
  };
  const repository = (files: Record<string, string> = {}) =>
    checkout('https://github.com/acme/catalog', {
      'cortex-sync.yaml': `sourceId: ${SOURCE}\n`,
      '.cortex/scorecards/readiness.yaml': scorecard(),
      '.cortex/initiatives/kill2.yaml': initiative(INITIATIVE),
      ...files,
    });
  const api = async (path: string): Promise<unknown> => {
    const res = await fetch(`${emulator().url}${path}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    return res.json();
  };
  const initiativesNamed = async (name: string): Promise<unknown[]> => {
    const body = (await api('/api/v1/initiatives?includeDrafts=true&includeExpired=true&pageSize=1000')) as {
      initiatives: { name: string }[];
    };
    return body.initiatives.filter((i) => i.name === name);
  };
  const recordOf = async (sourceId: string): Promise<Record<string, unknown>> => {
    const body = (await api(`/api/v1/catalog/${encodeURIComponent(inventoryTag(sourceId))}/openapi`)) as {
      info: { 'x-cortex-definition': Record<string, unknown> };
    };
    return body.info['x-cortex-definition'];
  };
  const since = (from: number) => emulator().requests.slice(from);
  const posts = (from: number, path: string) => since(from).filter((r) => r.method === 'POST' && r.path === path);
  /** Leaves `match` out of the next `reads` list answers (of `path`, when given). */
  const dropFromLists = (match: string, reads: number, path?: string) =>
    emulator().setFaults({ dropFromLists: [{ match, reads, ...(path !== undefined ? { path } : {}) }] });

  return { emulator, checkout, repository, api, initiativesNamed, recordOf, since, posts, dropFromLists };
};
