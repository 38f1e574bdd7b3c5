/** The routing rules the emulator's webhook, `webhook-route` and `validate` share. */
import { describe, expect, it } from 'vitest';
import { mappingCollisions, mappingsOfInfo, routeWebhookPayload } from '../../src/core/webhook-routing.js';

const entities = [
  { tag: 'left-brain', mappings: [] },
  { tag: 'brain', mappings: ['left-brain', 'right-brain', '42'] },
  { tag: 'a', mappings: ['shared'] },
  { tag: 'b', mappings: ['shared'] },
];

describe('routeWebhookPayload', () => {
  it('matches the tag first, then one mapping; a number by its JSON text', () => {
    expect(routeWebhookPayload(['left-brain'], entities)).toMatchObject({ ok: true, tag: 'left-brain', via: 'tag' });
    expect(routeWebhookPayload(['right-brain'], entities)).toMatchObject({ ok: true, tag: 'brain', via: 'mapping' });
    expect(routeWebhookPayload([42], entities)).toMatchObject({ ok: true, tag: 'brain', value: '42' });
  });

  it('refuses no value, null, several values, non-strings, an unknown value and a value two entities map', () => {
    expect(routeWebhookPayload([], entities)).toMatchObject({ ok: false, reason: 'no-value' });
    expect(routeWebhookPayload([null], entities)).toMatchObject({ ok: false, reason: 'no-value' });
    expect(routeWebhookPayload(['a', 'b'], entities)).toMatchObject({ ok: false, reason: 'several-values' });
    expect(routeWebhookPayload([true], entities)).toMatchObject({ ok: false, reason: 'not-a-tag-value' });
    expect(routeWebhookPayload(['LEFT-BRAIN'], entities)).toMatchObject({ ok: false, reason: 'no-entity' });
    expect(routeWebhookPayload(['shared'], entities)).toMatchObject({
      ok: false,
      reason: 'ambiguous-mapping',
      holders: ['a', 'b'],
    });
  });
});

describe('mappingCollisions and mappingsOfInfo', () => {
  it('reports values two entities register and mappings that are another entity tag, not an entity own tag', () => {
    expect(mappingCollisions([...entities, { tag: 'self', mappings: ['self'] }])).toEqual([
      { type: 'shadowed-by-tag', value: 'left-brain', holder: 'brain', tagOf: 'left-brain' },
      { type: 'registered-twice', value: 'shared', holders: ['a', 'b'] },
    ]);
  });

  it('reads both spellings of the block, strings and numbers, once each', () => {
    const info = {
      'x-service-custom-integration-mappings': ['x', 7, { no: 1 }, 'x'],
      'x-cortex-custom-integration-mappings': ['y', 'x'],
    };
    expect(mappingsOfInfo(info)).toEqual(['x', '7', 'y']);
    expect(mappingsOfInfo(null)).toEqual([]);
  });
});
