/**
 * `cortex-sync --help` lists every environment variable the program reads (the README says so):
 * the names are taken from the sources themselves (every `CORTEX_*` name in the runtimes' code, and
 * the `_FILE` variant of every secret read with `resolveSecret`), so a new variable that `--help`
 * does not name fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './run.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
/** The code the command line runs (the emulator and the benchmarks read their own test settings; the Action reads inputs). */
const FOLDERS = ['api', 'cli', 'core', 'engine', 'export', 'runtime-io', 'source', 'watch', 'webhook-route'];

const sources = (): string[] =>
  FOLDERS.flatMap((folder) =>
    readdirSync(join(SRC, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(join(SRC, folder, file), 'utf8')),
  );

const variablesRead = (): string[] => {
  const names = new Set<string>();
  for (const text of sources()) {
    for (const m of text.matchAll(/\b(CORTEX_[A-Z0-9_]*[A-Z0-9])\b/g)) if (m[1] !== undefined) names.add(m[1]);
    // A secret is read as NAME or NAME_FILE (`engine/api-key.ts` resolveSecret).
    for (const m of text.matchAll(/(?:secretOf|resolveSecret)\([^)]*?'(CORTEX_[A-Z0-9_]+)'/g))
      if (m[1] !== undefined) names.add(`${m[1]}_FILE`);
  }
  return [...names].sort();
};

describe('--help', () => {
  it('names every environment variable the code reads', async () => {
    const names = variablesRead();
    expect(names).toEqual(
      expect.arrayContaining(['CORTEX_API_KEY', 'CORTEX_SYNC_WEBHOOK_SECRET', 'CORTEX_SYNC_GIT_TOKEN_FILE']),
    );
    const help = await cli(['--help'], { cwd: SRC });
    expect(help.code).toBe(0);
    const missing = names.filter((name) => !new RegExp(`\\b${name}\\b`).test(help.stdout));
    expect(missing).toEqual([]);
  });
});
