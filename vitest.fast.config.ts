// `npm run test:fast`: the inner loop. The unit tests only: no end-to-end runs, no child
// processes, no corpus, no benchmark, no suite that drives whole applies through the emulator.
// CI runs everything (`npm test`).
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        '**/node_modules/**',
        'test/e2e/**',
        'test/bench/**',
        'test/corpus/**',
        'test/cli/**',
        'test/action/**',
        'test/watch/**',
        'test/export/round-trip.test.ts',
        'test/emulator/**',
        'test/kinds/**/emulator*.test.ts',
        'test/kinds/**/roundtrip.test.ts',
        'test/kinds/**/reconcile.test.ts',
        'test/kinds/entity/parse-corpus.test.ts',
        'test/source/yaml-fast.test.ts',
        'test/conformance/**',
        'test/engine/reconcile.test.ts',
        'test/engine/abort.test.ts',
        'test/engine/events.test.ts',
        'test/engine/leak.test.ts',
        'test/engine/create-safety.test.ts',
        'test/engine/lease.test.ts',
        'test/api/resources.test.ts',
        'test/api/retry-after-window.test.ts',
        'test/source/unreadable-prune.test.ts',
        'test/engine/ownership-trust.test.ts',
        'test/export/refusals.test.ts',
        'test/export/golden.test.ts',
        'test/kinds/entity/live.test.ts',
        'test/kinds/entity-type/definitions-check.test.ts',
      ],
    },
  }),
);
