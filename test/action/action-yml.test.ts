import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actionYml } from '../../src/action/action-yml.js';

describe('action.yml', () => {
  it('is the one generated from the table of settings (run `npm run action-yml` after changing a setting)', async () => {
    const committed = await readFile(join(import.meta.dirname, '..', '..', 'action.yml'), 'utf8');
    expect(committed, 'action.yml is stale').toBe(actionYml());
  });
});
