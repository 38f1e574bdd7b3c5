/**
 * The README's table of settings is the one generated from the table (`npm run docs:settings`),
 * one row per setting saying each way it is given; a setting added from a fixture (the test-only
 * kind's, `test/conformance/entity-note/`) gets its row from its entry alone.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsTableMarkdown, withSettingsTable } from '../../src/cli/readme-settings.js';
import { SETTINGS, settingsTable } from '../../src/engine/settings.js';
import { kindsWith } from '../../src/kinds/registry.js';
import { entityNoteKind } from '../conformance/entity-note/index.js';

const readme = () => readFile(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe("the README's table of settings", () => {
  it('is the one generated from the table of settings (run `npm run docs:settings` after changing a setting)', async () => {
    const committed = await readme();
    expect(committed, 'README.md’s table of settings is stale').toBe(withSettingsTable(committed));
  });

  it('has one row per setting, with its key, flag, variable, Action input, file rule and default', async () => {
    const committed = await readme();
    for (const spec of SETTINGS) expect(committed).toContain(`| \`${spec.key}\` |`);
    const row = committed.split('\n').find((line) => line.startsWith('| `prune` |'));
    expect(row).toContain('`--prune`, `--no-prune` (plan, apply, watch)');
    expect(row).toContain('`CORTEX_SYNC_PRUNE`');
    expect(row).toContain('| `prune` | set it');
    expect(row).toMatch(/\| `false` \|$/);
    const never = committed.split('\n').find((line) => line.startsWith('| `allowMassDelete` |'));
    expect(never).toContain("never: lifting the mass-delete guard is the operator's decision");
    expect(committed).toContain('| `requestsPerMinute` |');
    expect(committed).toMatch(/\| `maxDeleteShare` \|.*only lower it below the default/);
  });

  it('gets a new setting’s row from its entry alone', () => {
    const rows = settingsTableMarkdown(settingsTable(kindsWith([entityNoteKind]))).split('\n');
    const row = rows.find((line) => line.startsWith('| `maxNotesPerEntity` |'));
    expect(row).toContain('`--max-notes-per-entity');
    expect(row).toContain('`CORTEX_SYNC_MAX_NOTES_PER_ENTITY`');
    expect(row).toContain('`max-notes-per-entity`');
    expect(row).toContain('only lower it');
  });

  it('keeps a table cell whole whatever a help says, and refuses a README without its markers', () => {
    const [spec] = SETTINGS;
    const odd = [{ ...spec!, title: 'a | b', help: 'two\nlines' }];
    const row = settingsTableMarkdown(odd).split('\n')[2]!;
    expect(row).toContain('a \\| b: two lines');
    expect(row.split(/(?<!\\)\|/)).toHaveLength(10);
    expect(() => withSettingsTable('# no markers\n')).toThrow(/settings:start/);
  });
});
