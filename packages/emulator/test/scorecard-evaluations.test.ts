/**
 * Scorecard writes as the vendor's API answers them beyond their shape: a write that meets an
 * evaluation in progress is refused with a 5xx (the vendor's CLI retries it), a
 * filter the API does not know is an undetailed "Invalid scorecard yaml", and the descriptor read
 * back holds the settings the API fills in.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { bodyOf, call, start } from './helpers.js';

const YAML = 'application/yaml;charset=UTF-8';
const CARD = 'tag: eval\nname: Eval\nrules:\n  - expression: git != null\n';

const write = (emu: Awaited<ReturnType<typeof start>>, body = CARD) =>
  call(emu, 'POST', '/api/v1/scorecards/descriptor', { body, contentType: YAML });
const evaluate = (emu: Awaited<ReturnType<typeof start>>, body: unknown) =>
  call(emu, 'POST', '/_emulator/scorecard-evaluations', { body, key: null });

describe('a scorecard being evaluated', () => {
  it('refuses its next N writes with the chosen 5xx and no effect, then accepts them; other scorecards are not affected', async () => {
    const emu = await start();
    expect((await write(emu)).status).toBe(200);
    expect((await evaluate(emu, { tag: 'eval', failWrites: 2, status: 503 })).status).toBe(200);

    const refused = await write(emu, CARD.replace('Eval', 'Changed'));
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ message: expect.stringContaining("Scorecard 'eval' is being evaluated") });
    expect(emu.state.scorecards.items.find((s) => s.tag === 'eval')?.name).toBe('Eval');
    // A dry run only validates: it is not a write.
    expect(
      (await call(emu, 'POST', '/api/v1/scorecards/descriptor?dryRun=true', { body: CARD, contentType: YAML })).status,
    ).toBe(200);
    expect((await write(emu, CARD.replace('tag: eval', 'tag: other'))).status).toBe(200);
    expect((await call(emu, 'DELETE', '/api/v1/scorecards/eval')).status).toBe(503);
    // Both refusals spent: the evaluation is over.
    const listed = bodyOf(
      await call(emu, 'GET', '/_emulator/scorecard-evaluations', { key: null }),
      z.object({ evaluations: z.array(z.unknown()) }),
    );
    expect(listed.evaluations).toEqual([]);
    expect((await write(emu, CARD.replace('Eval', 'Changed'))).status).toBe(200);
    expect(emu.state.scorecards.items.find((s) => s.tag === 'eval')?.name).toBe('Changed');
  });

  it('the control refuses what is not an evaluation', async () => {
    const emu = await start();
    for (const body of [{ tag: 'eval' }, { tag: '', failWrites: 1 }, { tag: 'eval', failWrites: 1, status: 404 }]) {
      expect((await evaluate(emu, body)).status, JSON.stringify(body)).toBe(400);
    }
    // 0 ends one in progress.
    await evaluate(emu, { tag: 'eval', failWrites: 5 });
    await evaluate(emu, { tag: 'eval', failWrites: 0 });
    expect(emu.state.scorecards.evaluations).toEqual([]);
  });
});

describe('scorecard descriptors', () => {
  it('a filter with `entityType`, or without types, groups or query, is "Invalid scorecard yaml" with no detail', async () => {
    const emu = await start();
    for (const filter of ['{entityType: service}', '{kind: GENERIC}', '[service]']) {
      const reply = await write(emu, `${CARD}filter: ${filter}\n`);
      expect(reply.status, filter).toBe(400);
      expect(reply.json).toMatchObject({ message: 'Invalid scorecard yaml' });
    }
    expect((await write(emu, `${CARD}filter: {kind: GENERIC, groups: {include: [tier-1]}}\n`)).status).toBe(200);
    // A rule's own filter is not held to it (the vendor's test scorecards give rules `{category}` alone).
    expect(
      (await write(emu, 'tag: r\nname: R\nrules:\n  - {expression: git != null, filter: {category: SERVICE}}\n'))
        .status,
    ).toBe(200);
  });

  it('are read back with every setting the API fills in, and with the settings a write gave', async () => {
    const emu = await start();
    await write(emu, `${CARD}draft: true\n`);
    await write(
      emu,
      CARD.replace('tag: eval', 'tag: tuned') + 'evaluation: {window: 12}\nexemptions: {enabled: false}\n',
    );
    const read = async (tag: string) =>
      parse(z.string().parse((await call(emu, 'GET', `/api/v1/scorecards/${tag}/descriptor`)).json)) as Record<
        string,
        unknown
      >;
    expect(await read('eval')).toMatchObject({
      draft: true,
      // The vendor's OpenAPI: notifications default to off for a draft, exemptions on, a 4-hour window.
      notifications: { enabled: false, scoreDropNotificationsEnabled: false },
      exemptions: { enabled: true, autoApprove: false },
      evaluation: { window: 4 },
      rules: [{ expression: 'git != null', weight: 1 }],
    });
    expect(await read('tuned')).toMatchObject({
      draft: false,
      notifications: { enabled: true },
      exemptions: { enabled: false, autoApprove: false },
      evaluation: { window: 12 },
    });
    expect((await write(emu, `${CARD}evaluation: {window: soon}\n`)).status).toBe(400);
  });
});
