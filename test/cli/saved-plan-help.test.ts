/** `--help` names the saved plan and `status` (issue 31): the commands, their flags, what the key needs. */
import { describe, expect, it } from 'vitest';
import { cli, removeDir, tempDir } from './run.js';

const help = async (args: string[]): Promise<string> => {
  const dir = await tempDir();
  try {
    const r = await cli(args, { cwd: dir });
    expect(r.code).toBe(0);
    return r.stdout;
  } finally {
    await removeDir(dir);
  }
};

describe('--help', () => {
  it('lists status, apply FILE and what status needs of the key', async () => {
    const top = await help(['--help']);
    expect(top).toMatch(/status \[options\]/);
    expect(top).toMatch(/apply FILE/);
    expect(top).toMatch(/status\s+EDIT_ENTITY_TYPES, EDIT_ENTITIES/);
    expect(top).toMatch(/apply FILE does not ask/);
  });
  it('plan --out, apply [plan-file], status flags', async () => {
    expect(await help(['plan', '--help'])).toContain('--out <file>');
    expect(await help(['apply', '--help'])).toContain('[plan-file]');
    const status = await help(['status', '--help']);
    for (const flag of ['--dir', '--source-id', '--output', '--objects']) expect(status).toContain(flag);
  });
});
