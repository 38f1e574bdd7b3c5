/**
 * A setting is one entry of the table (`engine/settings.ts`): an entry added from a fixture — the
 * test-only kind's, written beside its folder (`test/conformance/entity-note/`) and reaching the
 * table through the kinds handed in, as a registered kind's does through the registry — is found
 * in the file's schema, `--help`'s environment list, the commands' flags, the Action's inputs and
 * the generated `action.yml`, and is resolved flag > environment > file (lower only) > default.
 */
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { actionYml } from '../../src/action/action-yml.js';
import { InputError, readSettingInputs } from '../../src/action/inputs.js';
import { settingsEnvironmentHelp } from '../../src/cli/help.js';
import { CONFIG_FILE, resolveConfig } from '../../src/engine/config.js';
import { configFileSchemaOf } from '../../src/engine/config-file.js';
import { booleanValue, setting } from '../../src/core/settings.js';
import { deleteScopeOf } from '../../src/engine/delete-scope.js';
import { SETTINGS, settingsTable } from '../../src/engine/settings.js';
import { renderPlanText } from '../../src/render/text.js';
import { KIND_HANDLERS, kindsWith } from '../../src/kinds/registry.js';
import { addSettingOptions, settingsSaid } from '../../src/runtime-io/setting-options.js';
import { entityNoteKind } from '../conformance/entity-note/index.js';
import { removeDir, tempDir, writeFiles } from './helpers.js';

const table = settingsTable(kindsWith([entityNoteKind]));
const KEY = 'maxNotesPerEntity';

let dir: string;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => removeDir(dir));

const flagsOf = (argv: string[]) => {
  const cmd = addSettingOptions(new Command('plan').exitOverride(), 'plan', table);
  cmd.parse(argv, { from: 'user' });
  return settingsSaid(cmd.opts(), table);
};

describe('the settings table', () => {
  it('takes a kind’s setting from its folder alone (the kinds handed in), not from any file of src/', () => {
    expect(settingsTable().some((s) => s.key === KEY)).toBe(false);
    expect(SETTINGS.map((s) => s.key)).toEqual(expect.arrayContaining(['pruneEntities', 'forceEntityTypeSchema']));
    expect(table.map((s) => s.key)).toContain(KEY);
    expect(KIND_HANDLERS.some((k) => k.kind === entityNoteKind.kind)).toBe(false);
  });

  it('derives the file’s schema, --help, the flags, the Action’s inputs and action.yml from one entry', () => {
    expect(configFileSchemaOf(table).safeParse({ [KEY]: 5 }).success).toBe(true);
    expect(configFileSchemaOf(SETTINGS).safeParse({ [KEY]: 5 }).success).toBe(false);
    expect(settingsEnvironmentHelp(table)).toMatch(/CORTEX_SYNC_MAX_NOTES_PER_ENTITY\s+refuse a plan that gives/);
    expect(flagsOf(['--max-notes-per-entity', '7'])).toEqual({ [KEY]: 7 });
    expect(() => flagsOf(['--max-notes-per-entity', '0'])).toThrow(/expected a whole number from 1 to 1000/);
    expect(readSettingInputs((name) => (name === 'max-notes-per-entity' ? '9' : ''), table)).toMatchObject({
      [KEY]: 9,
    });
    const yml = parse(actionYml(table)) as { inputs: Record<string, { default: string }> };
    expect(yml.inputs['max-notes-per-entity']).toMatchObject({ default: '' });
  });

  it('resolves it flag > environment > file (which may only lower it) > default', async () => {
    const env = { CORTEX_SYNC_MAX_NOTES_PER_ENTITY: '50' };
    const value = async (flags: Record<string, unknown>, e: NodeJS.ProcessEnv) =>
      (await resolveConfig(flags, e, dir, table)).config as unknown as Record<string, unknown>;
    expect((await value({}, {}))[KEY]).toBe(100);
    await writeFiles(dir, { [CONFIG_FILE]: `${KEY}: 20\n` });
    expect((await value({}, {}))[KEY]).toBe(20);
    expect((await value({}, env))[KEY]).toBe(50);
    expect((await value({ [KEY]: 3 }, env))[KEY]).toBe(3);
    await writeFiles(dir, { [CONFIG_FILE]: `${KEY}: 500\n` });
    const raised = await resolveConfig({}, {}, dir, table);
    expect((raised.config as unknown as Record<string, unknown>)[KEY]).toBe(100);
    expect(raised.diagnostics).toMatchObject([{ severity: 'warning', line: 1, field: KEY }]);
  });
});

describe('attacks on the table’s derivations', () => {
  it('a file may not set an operator-only setting (one-run switches included)', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: x\nallowMassDelete: true\nbreakLease: true\n' });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(config.allowMassDelete).toBe(false);
    expect(config.breakLease).toBeUndefined();
    expect(diagnostics).toMatchObject([
      { severity: 'error', file: CONFIG_FILE, line: 2, field: 'allowMassDelete' },
      { severity: 'error', file: CONFIG_FILE, line: 3, field: 'breakLease' },
    ]);
  });

  it('a `__proto__` key in the file is an unknown key naming its line, and pollutes nothing', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'sourceId: x\n__proto__:\n  prune: true\n' });
    const { config, diagnostics } = await resolveConfig({}, {}, dir);
    expect(config.prune).toBe(false);
    expect(({} as Record<string, unknown>).prune).toBeUndefined();
    expect(diagnostics.some((d) => d.severity === 'error' && d.file === CONFIG_FILE && d.line === 2)).toBe(true);
  });

  it('a blank variable is unset; a flag beats a variable that disagrees', async () => {
    await writeFiles(dir, { [CONFIG_FILE]: 'prune: true\n' });
    const blank = await resolveConfig({}, { CORTEX_SYNC_PRUNE: '  ' }, dir);
    expect(blank.config.prune).toBe(true);
    expect(blank.diagnostics).toEqual([]);
    const said = await resolveConfig({ prune: false }, { CORTEX_SYNC_PRUNE: 'true' }, dir);
    expect(said.config.prune).toBe(false);
    expect(said.config.origins?.prune.name).toBe('--no-prune');
  });

  it('an Action input with a newline in it is refused naming the input, its text escaped', () => {
    expect(() => readSettingInputs((name) => (name === 'prune' ? 'true\nfalse' : ''))).toThrow(InputError);
    expect(() => readSettingInputs((name) => (name === 'prune' ? 'true\nfalse' : ''))).toThrow(
      /input `prune`: expected true or false, got 'true\\nfalse'/,
    );
    // Surrounding whitespace is not part of the value.
    expect(readSettingInputs((name) => (name === 'strict' ? ' true \n' : ''))).toMatchObject({ strict: true });
  });

  it('a value handed in without commander (a runtime’s settings) is checked against the schema', async () => {
    const { diagnostics } = await resolveConfig({ concurrency: 1000 }, {}, dir);
    expect(diagnostics).toMatchObject([
      { severity: 'error', message: expect.stringMatching(/^--concurrency: expected/) as string },
    ]);
  });
});

describe('the plan’s delete-scope header', () => {
  /** A fixture setting that widens deletes: named in the header by its table entry alone. */
  const purgeNotes = setting({
    key: 'purgeNotes',
    title: 'purge notes',
    help: 'remove every note this source wrote, manifests or not',
    commands: [],
    env: 'CORTEX_SYNC_PURGE_NOTES',
    file: 'allowed',
    value: booleanValue,
    default: false,
    widensDeletes: true,
    widens: (on) => (on ? 'every note of this source is removed' : undefined),
  });
  const widening = [...table, purgeNotes];

  it('names a new setting that widens deletes, with who said it, from its table entry alone', async () => {
    const { config } = await resolveConfig({}, { CORTEX_SYNC_PURGE_NOTES: 'true' }, dir, widening);
    const scope = deleteScopeOf(config, undefined, undefined, widening);
    expect(scope.widened).toEqual([
      {
        setting: 'purgeNotes',
        value: true,
        from: 'environment',
        name: 'CORTEX_SYNC_PURGE_NOTES',
        effect: 'every note of this source is removed',
      },
    ]);
    const text = renderPlanText(
      {
        changes: [],
        diagnostics: [],
        summary: { create: 0, update: 0, delete: 0, archive: 0, noop: 0 },
        scope,
      },
      { color: false },
    );
    expect(text).toContain('! purgeNotes: true (CORTEX_SYNC_PURGE_NOTES): every note of this source is removed');
    const off = await resolveConfig({}, {}, dir, widening);
    expect(deleteScopeOf(off.config, undefined, undefined, widening).widened).toEqual([]);
  });

  it('names a widening setting without its own line whenever it is not its default', async () => {
    const bare = { ...purgeNotes, widens: undefined };
    await writeFiles(dir, { [CONFIG_FILE]: 'purgeNotes: true\n' });
    const { config } = await resolveConfig({}, {}, dir, [...table, bare]);
    expect(deleteScopeOf(config, undefined, undefined, [...table, bare]).widened).toMatchObject([
      {
        setting: 'purgeNotes',
        value: true,
        from: 'file',
        name: `${CONFIG_FILE}:1`,
        effect: expect.stringContaining('not the default') as string,
      },
    ]);
  });
});
