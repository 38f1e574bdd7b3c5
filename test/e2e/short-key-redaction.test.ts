/**
 * A short key (here 4 characters, a common word) is redacted only where it stands as a whole
 * token: the plan still shows "latest", "testing" and "contest", while the key itself, wherever it
 * stands alone, is never printed.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { REDACTED, redactSecrets } from '../../src/api/redact.js';
import { cli, type Emulator, removeDir, startTestEmulator, tempDir, writeFiles } from './harness.js';

let emulator: Emulator;
let dir: string;
beforeEach(async () => {
  emulator = await startTestEmulator({ apiKey: 'test' });
  dir = await tempDir();
});
afterEach(async () => {
  await emulator.stop();
  await removeDir(dir);
});

it('plan with the key `test`: words holding it are printed whole, the key alone is redacted', async () => {
  await writeFiles(dir, {
    '.cortex/catalog/svc.yaml': [
      'openapi: 3.0.1',
      'info:',
      '  title: svc',
      '  x-cortex-tag: svc',
      '  x-cortex-type: service',
      '  description: the latest testing contest, key test here',
      '',
    ].join('\n'),
  });
  const run = await cli(['plan', '--dir', '.'], {
    cwd: dir,
    env: { CORTEX_BASE_URL: emulator.url, CORTEX_API_KEY: 'test' },
  });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`the latest testing contest, key ${REDACTED} here`);
});

it.each([
  ['whole words holding it are kept', 'latest testing contest Test', 'latest testing contest Test'],
  [
    'alone, between punctuation, quoted, in a header',
    'key=test; "test" Bearer test.',
    `key=${REDACTED}; "${REDACTED}" Bearer ${REDACTED}.`,
  ],
  ['next to digits or an underscore it is another token', 'test1 test_x 2test', 'test1 test_x 2test'],
  ['its base64 form alone', 'Basic dGVzdA==', `Basic ${REDACTED}==`],
])('a 4-character key: %s', (_what, text, expected) => {
  expect(redactSecrets(text, 'test')).toBe(expected);
});
