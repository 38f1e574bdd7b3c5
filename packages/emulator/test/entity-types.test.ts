import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EntityType, ErrorBody, listOf } from './bodies.js';
import { bodyOf, call, descriptor, start } from './helpers.js';

const agentSchema = { type: 'object', properties: { model: { type: 'string' } } };

describe('entity types', () => {
  it('lists custom types only; built-ins with includeBuiltIn; never service, domain or team', async () => {
    const emu = await start();
    const created = await call(emu, 'POST', '/api/v1/catalog/definitions', {
      body: {
        type: 'ai-agent',
        name: 'AI Agent',
        description: 'd',
        iconTag: 'Cortex-builtin::Robot',
        schema: agentSchema,
      },
    });
    expect(created.json).toMatchObject({ type: 'ai-agent', source: 'CUSTOM', iconTag: 'Cortex-builtin::Robot' });
    const custom = await call(emu, 'GET', '/api/v1/catalog/definitions');
    expect(bodyOf(custom, listOf('definitions', EntityType)).definitions.map((d) => d.type)).toEqual(['ai-agent']);
    const all = await call(emu, 'GET', '/api/v1/catalog/definitions?includeBuiltIn=true');
    const types = bodyOf(all, listOf('definitions', EntityType)).definitions.map((d) => d.type);
    expect(types).toEqual(expect.arrayContaining(['ai-agent', 'rds', 's3']));
    for (const core of ['service', 'domain', 'team']) expect(types).not.toContain(core);
    const agent = await call(emu, 'GET', '/api/v1/catalog/definitions/ai-agent');
    expect(bodyOf(agent, z.looseObject({ schema: z.unknown() })).schema).toEqual(agentSchema);
  });

  it('refuses to create an existing type and replaces an invalid icon with the default', async () => {
    const emu = await start();
    const first = await call(emu, 'POST', '/api/v1/catalog/definitions', {
      body: { type: 'queue', schema: {}, iconTag: 'no-such-icon' },
    });
    expect(bodyOf(first, z.looseObject({ iconTag: z.string() })).iconTag).toBe('Cortex-builtin::Box');
    const again = await call(emu, 'POST', '/api/v1/catalog/definitions', { body: { type: 'queue', schema: {} } });
    expect(again.status).toBe(400);
    expect(
      (await call(emu, 'POST', '/api/v1/catalog/definitions', { body: { type: 'service', schema: {} } })).status,
    ).toBe(400);
  });

  it('refuses a schema change that existing entities break, unless force=true', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/catalog/definitions', { body: { type: 'ai-agent', schema: agentSchema } });
    await call(emu, 'POST', '/api/v1/open-api', {
      body: descriptor('bot', { 'x-cortex-type': 'ai-agent', 'x-cortex-definition': { model: 'm' } }),
    });
    const stricter = { ...agentSchema, required: ['model', 'vendor'] };
    const refused = await call(emu, 'PUT', '/api/v1/catalog/definitions/ai-agent', { body: { schema: stricter } });
    expect(refused.status).toBe(400);
    expect(bodyOf(refused, ErrorBody).message).toContain('bot');
    const forced = await call(emu, 'PUT', '/api/v1/catalog/definitions/ai-agent?force=true', {
      body: { schema: stricter, name: 'Agent' },
    });
    expect(forced).toMatchObject({ status: 200, json: { name: 'Agent', schema: stricter } });
    const compatible = { ...agentSchema, required: ['model'] };
    expect(
      (await call(emu, 'PUT', '/api/v1/catalog/definitions/ai-agent', { body: { schema: compatible } })).status,
    ).toBe(200);
    expect((await call(emu, 'PUT', '/api/v1/catalog/definitions/nope', { body: { schema: {} } })).status).toBe(404);
  });

  it('deletes a type, 404 when unknown', async () => {
    const emu = await start();
    await call(emu, 'POST', '/api/v1/catalog/definitions', { body: { type: 'queue', schema: {} } });
    expect((await call(emu, 'DELETE', '/api/v1/catalog/definitions/queue')).status).toBe(200);
    expect((await call(emu, 'GET', '/api/v1/catalog/definitions/queue')).status).toBe(404);
    expect((await call(emu, 'DELETE', '/api/v1/catalog/definitions/queue')).status).toBe(404);
  });
});
