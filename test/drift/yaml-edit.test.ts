import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { applyPathEdits, EditRefused, pathEdits } from '../../src/drift/yaml-edit.js';

const COMMENTED = `# top comment: kept
openapi: 3.0.1
info:
  title: "Payments API" # the name people search for
  x-cortex-owners:
    - type: group   # odd spacing kept
      name: payments-team
  x-cortex-groups: [a, b]
  x-cortex-custom-metadata:
    tier: 0
    cost-center: 'CC-668'

  # a comment before the link
  x-cortex-link:
    - name: Runbook
`;

const edited = (text: string, target: unknown) => {
  const edits = pathEdits(parse(text), target as never);
  return applyPathEdits(text, 0, edits);
};

describe('in-place YAML edits', () => {
  it('changes one scalar and leaves every other byte, its quoting and its comment', () => {
    const target = parse(COMMENTED);
    target.info.title = 'Payments "API"';
    const { text, reformatted } = edited(COMMENTED, target);
    expect(reformatted).toBe(false);
    expect(text).toBe(COMMENTED.replace('"Payments API"', '"Payments \\"API\\""'));
    expect(parse(text)).toEqual(target);
  });

  it('keeps single quotes and plain style', () => {
    const target = parse(COMMENTED);
    target.info['x-cortex-custom-metadata']['cost-center'] = "CC-'1'";
    target.info['x-cortex-custom-metadata'].tier = 2;
    const { text } = edited(COMMENTED, target);
    expect(text).toBe(COMMENTED.replace("'CC-668'", "'CC-''1'''").replace('tier: 0', 'tier: 2'));
  });

  it('adds, removes and replaces keys of block mappings on their own lines', () => {
    const target = parse(COMMENTED);
    delete target.info['x-cortex-custom-metadata'];
    target.info.description = 'new';
    target.info['x-cortex-owners'].push({ type: 'email', email: 'a@example.com' });
    const { text, reformatted } = edited(COMMENTED, target);
    expect(reformatted).toBe(false);
    expect(parse(text)).toEqual(target);
    expect(text).toContain('# top comment: kept\n');
    expect(text).toContain('  title: "Payments API" # the name people search for\n');
    expect(text).toContain('  # a comment before the link\n');
    expect(text).not.toContain('cost-center');
  });

  it('edits inside a flow list, quoting what a flow list cannot hold plain', () => {
    const target = parse(COMMENTED);
    target.info['x-cortex-groups'] = ['a', 'c,d'];
    const { text } = edited(COMMENTED, target);
    expect(text).toBe(COMMENTED.replace('[a, b]', '[a, "c,d"]'));
    expect(parse(text)).toEqual(target);
  });

  it('refuses a path through an alias', () => {
    const text = 'base: &b\n  x: 1\nuse: *b\n';
    expect(() => applyPathEdits(text, 0, [{ op: 'set', path: ['use', 'x'], value: 2 }])).toThrow(EditRefused);
  });

  it('edits the second document of a file and leaves the first', () => {
    const text = 'a: 1\n---\nb: 2 # two\n';
    const out = applyPathEdits(text, 1, [{ op: 'set', path: ['b'], value: 3 }]);
    expect(out.text).toBe('a: 1\n---\nb: 3 # two\n');
  });
});
