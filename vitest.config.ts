// The test tiers are folders (vitest projects): a test's folder says which tier runs it. `npm test`
// runs every project; `npm run test:fast` the inner loop (`fast`: no end-to-end run, no child
// process, no corpus, no benchmark, no suite that drives whole applies through the emulator);
// `npm run test:e2e` the end-to-end tier CI also runs on Node 20 and 22. `fast` is every test
// folder no other tier names, so a new folder is in a tier from its first test.
import { defineConfig } from 'vitest/config';

/** The end-to-end tier: the command as a process, the README run as written, the image. */
const E2E = ['test/e2e', 'test/cli', 'test/image'];
/** Whole applies through the emulator, the runtimes, the corpus, the conformance of every kind. */
const INTEGRATION = ['test/integration', 'test/action', 'test/watch', 'test/corpus', 'test/conformance'];
const under = (folders: readonly string[]) => folders.map((folder) => `${folder}/**/*.test.ts`);

export default defineConfig({
  // `cortex-sync emulator` run in-process imports the emulator package: its sources here, as every
  // test imports them, not the bundle `npm run build` left (a process-level test runs that).
  resolve: {
    alias: [
      {
        find: /^@cortex-sync\/emulator$/,
        replacement: new URL('packages/emulator/src/index.ts', import.meta.url).pathname,
      },
    ],
  },
  test: {
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Most suites wait on loopback servers, child processes and clocks rather than compute: four
    // workers on two cores halve the suite's wall time (about 6.5 min → 3 min) without CPU starvation.
    maxWorkers: 4,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...under([...E2E, ...INTEGRATION])],
          // Pure tests, no child process and no global state (no module mocks, fake timers or
          // process.chdir anywhere): a worker keeps its modules from one file to the next instead
          // of importing the sources again for each of the ~95 files (a quarter of the tier's time).
          isolate: false,
        },
      },
      { extends: true, test: { name: 'e2e', include: under(E2E) } },
      { extends: true, test: { name: 'integration', include: under(INTEGRATION) } },
      // The workspace packages' own tests (packages/emulator, packages/bench).
      { extends: true, test: { name: 'emulator', include: ['packages/emulator/test/**/*.test.ts'] } },
      { extends: true, test: { name: 'bench', include: ['packages/bench/test/**/*.test.ts'] } },
    ],
  },
});
