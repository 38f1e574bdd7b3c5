/**
 * Every folder of `src/` says what it holds: a `readme.md` in each (a kind's `fixtures/` folder
 * is a small repository: its readme sits at its root, and the layout folders below it hold only
 * manifests, as a user's repository does).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Every folder under `dir`, the folders inside a `fixtures/` folder left out. */
const foldersUnder = (dir: string): string[] => {
  const found = [dir];
  if (dir.split(sep).at(-1) === 'fixtures') return found;
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) found.push(...foldersUnder(join(dir, entry.name)));
  return found;
};

describe('the folders of src/', () => {
  it('each have a readme.md', () => {
    const folders = foldersUnder(SRC);
    expect(folders.length).toBeGreaterThan(15);
    const without = folders.filter((f) => !existsSync(join(f, 'readme.md'))).map((f) => relative(SRC, f) || '.');
    expect(without).toEqual([]);
  });
});
