// Lint: ESLint's and typescript-eslint's recommended rules, type-checked, with `any` forbidden,
// and the layering of src/ enforced as an allow-list per folder (eslint.layers.js). Formatting is
// Prettier's job (`npm run format`); the two do not overlap.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint.layers.js';

const nodeGlobals = {
  process: 'readonly',
  console: 'readonly',
  Buffer: 'readonly',
  URL: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
};

/** Node modules that do IO; the pure core never imports them. */
const IO_MODULES = [
  'fs',
  'fs/promises',
  'http',
  'https',
  'net',
  'child_process',
  'process',
  'dgram',
  'tls',
  'worker_threads',
];

const WORKSPACE_PACKAGES =
  'the workspace packages (packages/: the emulator, the benchmark) are not part of the product (docs/architecture.md).';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'packages/*/dist/',
      'dist-action/',
      'node_modules/',
      'coverage/',
      'schemas/',
      'bench/tmp/',
      '**/*.generated.ts',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Tests and fakes implement async ports with synchronous bodies (`async () => value`); an
      // `await` there would only be noise.
      '@typescript-eslint/require-await': 'off',
      // Zod, YAML and JSON values are checked before use; a template literal of an `unknown` or a
      // number is the intended rendering in messages.
      '@typescript-eslint/restrict-template-expressions': 'off',
      // Waits reject with `signal.reason`, which is whatever the aborter passed (AbortSignal's own
      // contract, as `timers/promises` does); wrapping it would hide what the caller asked for.
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    // Tests parse JSON documents and use vitest's asymmetric matchers (`expect.any`,
    // `expect.objectContaining`), both typed `any`; what a test reads it asserts at once.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fixtures keep casts that say which shape a literal stands for.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    // The emulator answers whatever a client sends, as the real API does: it stringifies tolerant
    // request fields (a `method` or `title` of any JSON type) into its answers on purpose.
    files: ['packages/emulator/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
    },
  },
  {
    // The layering of src/ as an allow-list per folder (eslint.layers.js): core ← api, source,
    // render ← ownership ← kinds ← engine ← runtimes; a folder without a layer is an error. The
    // workspace packages import only the folders of src/ listed for them, and src/ none of them.
    files: ['src/**/*.ts', 'packages/*/src/**/*.ts'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/allowed-imports': 'error' },
  },
  {
    // The workspace packages are not in the published package: src/ imports none of them by name
    // either (by path, eslint.layers.js says so), but for `cortex-sync emulator`, which says where
    // it runs when the emulator is not installed.
    files: ['src/**/*.ts'],
    ignores: ['src/core/**', 'src/cli/emulator-command.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@cortex-sync/*'], message: WORKSPACE_PACKAGES }] },
      ],
    },
  },
  {
    // The pure core: no IO and no HTTP client (what it may import of src/ is in eslint.layers.js).
    files: ['src/core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: IO_MODULES.flatMap((name) => [name, `node:${name}`]).map((name) => ({
            name,
            message: 'src/core is pure: IO belongs at the edges (engine, source, api, entrypoints).',
          })),
          patterns: [
            {
              group: ['undici'],
              message: 'src/core imports no HTTP client: pass what it needs in (see docs/architecture.md).',
            },
            { group: ['@cortex-sync/*'], message: WORKSPACE_PACKAGES },
          ],
        },
      ],
    },
  },
  {
    // Kinds narrow tolerant API responses and manifest values by hand (an `isObject` guard, then a
    // cast kept for the reader; untyped JSON Schema documents handed to ajv); their zod schemas
    // are the checks.
    files: ['src/kinds/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: nodeGlobals },
  },
);
