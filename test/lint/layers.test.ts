/**
 * The layering of src/ is an allow-list (eslint.layers.js): an import a folder's layer does not
 * list fails lint, and so does a folder with no layer, a kind's own file imported from outside
 * src/kinds/, and the same through `import type`, `export … from` and `import()`. The workspace
 * packages (packages/: the emulator, the benchmark) are outside the product: src/ imports none of
 * them, and each imports only the folders of src/ listed for it. Lint applies the rule to every file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { layersPlugin } from '../../eslint.layers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const linter = new Linter({ cwd: ROOT, configType: 'flat' });
const config = [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { layers: layersPlugin },
    rules: { 'layers/allowed-imports': 'error' },
  },
] as Linter.Config[];

/** The layer messages for `code` as the file `<path>` of the repository. */
const lintAt = (path: string, code: string): string[] =>
  linter.verify(code, config, { filename: join(ROOT, path) }).map((m) => m.message);
/** The layer messages for `code` as the file `src/<path>`. */
const lint = (path: string, code: string): string[] => lintAt(join('src', path), code);

/** Every `.ts` file under the repository's folder `dir`, relative to it, `/`-separated. */
const tsFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(sep).join('/'));

describe('the layering allow-list', () => {
  it.each([
    ['core/x.ts', "import type { ApiClient } from '../api/types.js';"],
    ['core/x.ts', "import { reconcile } from '../engine/reconcile.js';"],
    ['api/x.ts', "import type { Clock } from '../engine/context.js';"],
    ['source/x.ts', "import type { AnyKindHandler } from '../kinds/types.js';"],
    ['render/x.ts', "import { reconcile } from '../engine/reconcile.js';"],
    ['kinds/entity/x.ts', "import { reconcile } from '../../engine/reconcile.js';"],
    ['kinds/x.ts', "export { runCli } from '../cli/main.js';"],
    ['ownership/x.ts', "import { KIND_HANDLERS } from '../kinds/registry.js';"],
    ['engine/x.ts', "import { useColor } from '../runtime-io/io.js';"],
    ['engine/x.ts', "const m = await import('../cli/main.js');"],
    ['watch/x.ts', "import { canAsk } from '../cli/confirm.js';"],
    ['export/x.ts', "import { startWatcher } from '../watch/watcher.js';"],
    ['action/x.ts', "import { runExport } from '../export/command.js';"],
    ['runtime-io/x.ts', "import { reconcile } from '../engine/reconcile.js';"],
  ])('%s may not: %s', (path, code) => {
    expect(lint(path, code)).toEqual([expect.stringMatching(/may not import/)]);
  });

  it('outside src/kinds/, only the registry and the contracts of the kinds are imported, never a kind’s own file', () => {
    expect(lint('engine/x.ts', "import { entityKind } from '../kinds/entity/index.js';")).toEqual([
      expect.stringMatching(/kinds\/entity\/index\.ts is internal to src\/kinds\//),
    ]);
    expect(lint('engine/x.ts', "import { KIND_HANDLERS } from '../kinds/registry.js';")).toEqual([]);
  });

  it('a folder of src/ with no layer fails until it is given one', () => {
    expect(lint('plugins/x.ts', 'export const x = 1;')).toEqual([expect.stringMatching(/has no layer/)]);
  });

  it.each([
    ['api/x.ts', "import type { Clock } from '../core/clock.js';"],
    ['kinds/entity/x.ts', "import type { ApiClient } from '../../api/types.js';"],
    ['engine/x.ts', "import type { OwnershipStore } from '../ownership/store.js';"],
    [
      'export/x.ts',
      "import { reconcile } from '../engine/reconcile.js';\nimport { writeLine } from '../runtime-io/io.js';",
    ],
    ['cli/main.ts', "const { defineExportCommand } = await import('../export/command.js');"],
    ['webhook-route/run-command.ts', "import { createJqEvaluator } from '../jq/jq.js';"],
    ['api/x.ts', "import { VERSION } from '../version.js';"],
  ])('%s may: %s', (path, code) => {
    expect(lint(path, code)).toEqual([]);
  });

  it.each([
    ['webhook-route/run-command.ts', "import { createJqEvaluator } from '../../packages/emulator/src/jq.js';"],
    ['cli/x.ts', "const { runEmulatorCommand } = await import('../../packages/emulator/src/cli.js');"],
    ['core/x.ts', "export type { EmulatorState } from '../../packages/emulator/src/server.js';"],
  ])('src/%s may not reach into packages/: %s', (path, code) => {
    expect(lint(path, code)).toEqual([expect.stringMatching(/the workspace packages \(packages\/\) are not part/)]);
  });

  it('the emulator imports only the core and jq of src/; the benchmark anything', () => {
    expect(
      lintAt('packages/emulator/src/x.ts', "import { reconcile } from '../../../src/engine/reconcile.js';"),
    ).toEqual([
      expect.stringMatching(
        /packages\/emulator\/ may not import src\/engine\/reconcile\.ts: of src\/ it uses core\/, jq\//,
      ),
    ]);
    expect(
      lintAt('packages/emulator/src/resources/x.ts', "import { runCli } from '../../../../src/cli/main.js';"),
    ).toEqual([expect.stringMatching(/may not import src\/cli\/main\.ts/)]);
    expect(lintAt('packages/emulator/src/x.ts', "import { printable } from '../../../src/core/printable.js';")).toEqual(
      [],
    );
    expect(lintAt('packages/emulator/src/x.ts', "import { unbalancedJq } from '../../../src/jq/jq.js';")).toEqual([]);
    expect(lintAt('packages/bench/src/x.ts', "import { runCli } from '../../../src/cli/main.js';")).toEqual([]);
    expect(lintAt('packages/other/src/x.ts', "import { printable } from '../../../src/core/printable.js';")).toEqual([
      expect.stringMatching(/packages\/other\/ may not import .*nothing \(no entry\)/),
    ]);
  });

  // `npm run lint` (run by CI before the tests) checks every file with this rule; linting the
  // whole tree again here took most of a minute. What this proves is that lint's configuration
  // applies the rule, as an error, to every file of src/ and of the packages, none ignored.
  it('lint applies it to every file of src/ and of the packages', { timeout: 0 }, async () => {
    const eslint = new ESLint({ cwd: ROOT });
    const files = ['src', 'packages/emulator/src', 'packages/bench/src'].flatMap((dir) =>
      tsFiles(dir).map((f) => `${dir}/${f}`),
    );
    expect(files.length).toBeGreaterThan(200);
    const uncovered: string[] = [];
    const problems: string[] = [];
    for (const file of files) {
      if (await eslint.isPathIgnored(file)) {
        // Generated files lint skips are held to the layering here.
        problems.push(...lintAt(file, readFileSync(join(ROOT, file), 'utf8')).map((m) => `${file}: ${m}`));
        continue;
      }
      const rule: unknown = (await eslint.calculateConfigForFile(file))?.rules?.['layers/allowed-imports'];
      const level = Array.isArray(rule) ? rule[0] : rule;
      if (level !== 2 && level !== 'error') uncovered.push(file);
    }
    expect(uncovered).toEqual([]);
    expect(problems).toEqual([]);
  });
});
