/**
 * The scorecard manifest: its strict schema and located errors, the entity types its filters name,
 * and, offline, the repository's Initiatives checked against the scorecards it declares.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { DesiredObject, Diagnostic } from '../../../src/core/model.js';
import { validateManifests } from '../../../src/engine/reconcile.js';
import { scorecardKind as kind } from '../../../src/kinds/scorecard/index.js';
import type { ScorecardManifest } from '../../../src/kinds/scorecard/schema.js';
import { yamlDoc } from '../initiative/yaml-doc.js';

const AT = { now: Date.parse('2026-03-01T12:00:00Z') };

const MANIFEST = `tag: prod-readiness
name: Production readiness
description: The bar for production traffic
draft: false
notifications: {enabled: true}
evaluation: {window: 12}
filter:
  kind: GENERIC
  types:
    include: [service, database]
  query: hasGroup("tier-1")
ladder:
  name: Metals
  levels:
    - {name: Gold, rank: 1, color: "#FFD700"}
    - {name: Silver, rank: 2}
rules:
  - title: Has a runbook
    expression: links("runbook").length > 0
    level: Gold
    filter:
      types:
        include: [queue]
  - expression: git != null
    weight: 2
    level: Silver
`;

const parse = (text: string) => kind.manifest.parse(yamlDoc(text, '.cortex/scorecards/x.yaml'), AT);
const parseOne = (text: string): DesiredObject<ScorecardManifest> => {
  const result = parse(text);
  expect(result.diagnostics).toEqual([]);
  const [obj] = result.objects;
  if (!obj) throw new Error('no object');
  return obj;
};
const errors = (text: string): Pick<Diagnostic, 'line' | 'field' | 'message'>[] =>
  parse(text).diagnostics.map((d) => ({ line: d.line, field: d.field, message: d.message }));

describe('scorecard manifests', () => {
  it('parse the vendor descriptor, identified by its tag', () => {
    const obj = parseOne(MANIFEST);
    expect(obj).toMatchObject({
      kind: 'scorecard',
      id: 'prod-readiness',
      source: { file: '.cortex/scorecards/x.yaml' },
    });
    expect(obj.spec.rules).toHaveLength(2);
    // The vendor CLI's own scorecards, as its tests create them, parse too.
    parseOne(`tag: cli-test-scorecard
name: CLI Test Scorecard
draft: false
ladder:
  name: Default Ladder
  levels:
  - name: You Made It
    rank: 1
    description: "My boring description"
    color: 7cf376
rules:
- title: Has Custom Data
  expression: custom("testField") != null
  weight: 1
  level: You Made It
  filter:
    category: SERVICE
filter:
  query: 'entity.tag() == "cli-test-service"'
  category: SERVICE
`);
    // A points scorecard: no ladder, rules without levels.
    expect(
      parseOne('tag: points\nname: Points\nrules:\n  - {expression: git != null, weight: 3}\n').spec.rules,
    ).toEqual([{ expression: 'git != null', weight: 3 }]);
  });

  it('refuse what the API would refuse, located at the field', () => {
    expect(errors(MANIFEST.replace('  kind: GENERIC\n', '  entityType: service\n'))).toEqual([
      expect.objectContaining({
        field: 'filter.entityType',
        message: expect.stringContaining('the API answers "Invalid scorecard yaml"'),
      }),
    ]);
    expect(errors('tag: t\nname: T\nfilter: {kind: GENERIC}\n')).toEqual([
      { line: 3, field: 'filter', message: expect.stringContaining('needs `types`, `groups` or `query`') },
    ]);
    expect(errors('tag: t\nname: T\nowner: me\n')).toEqual([
      expect.objectContaining({ line: 3, message: expect.stringMatching(/owner/) }),
    ]);
  });

  it('refuse levels and rules that cannot be told apart or name a level the ladder lacks', () => {
    const text = `tag: t
name: T
ladder:
  levels:
    - {name: Gold, rank: 1}
    - {name: Gold, rank: 1}
rules:
  - {expression: git != null, level: Gold}
  - {expression: git != null, level: Gold}
  - {expression: oncall != null, level: Platinum}
  - {expression: sonar != null}
`;
    expect(errors(text)).toEqual([
      {
        line: 6,
        field: 'ladder.levels[1].rank',
        message: expect.stringContaining('repeats the rank of ladder.levels[0]'),
      },
      { line: 6, field: 'ladder.levels[1].name', message: expect.stringContaining('repeats the name') },
      { line: 9, field: 'rules[1].expression', message: expect.stringContaining('repeats the expression of rules[0]') },
      {
        line: 10,
        field: 'rules[2].level',
        message: 'rules[2].level: names no level of the ladder (its levels: Gold, Gold)',
      },
      { line: 11, field: 'rules[3]', message: expect.stringContaining('has no `level`') },
    ]);
    expect(errors('tag: t\nname: T\nrules:\n  - {expression: x, level: Gold}\n')).toEqual([
      { line: 4, field: 'rules[0].level', message: expect.stringContaining('the scorecard has no ladder') },
    ]);
  });

  it('refuse a tag with whitespace, a slash or a control character, or of dots only (it goes into paths and file names)', () => {
    for (const tag of ['"two words"', 'a/b', '"bell\\a"', '"zero\\u200bwidth"', '""', '..', '"."']) {
      expect(errors(`tag: ${tag}\nname: T\n`), tag).toEqual([expect.objectContaining({ field: 'tag', line: 1 })]);
    }
    expect(parseOne('tag: v1.2..beta\nname: T\n').id).toBe('v1.2..beta');
  });

  it('keep control characters in names and expressions as data (they are escaped where printed)', () => {
    const obj = parseOne(
      'tag: t\nname: "Bell \\a here"\nrules:\n  - {title: "\\u001b[31mred", expression: "git != null \\u0007"}\n',
    );
    expect(obj.spec.name).toBe('Bell \u0007 here');
    expect(obj.spec.rules[0]?.expression).toBe('git != null \u0007');
  });

  it('reference the custom entity types of their filters, so those are applied first', () => {
    expect(kind.manifest.references(parseOne(MANIFEST))).toEqual([
      {
        kind: 'entity-type',
        id: 'database',
        field: 'filter.types.include[1]',
        path: ['filter', 'types', 'include', 1],
        ordering: true,
      },
      {
        kind: 'entity-type',
        id: 'queue',
        field: 'rules[0].filter.types.include[0]',
        path: ['rules', 0, 'filter', 'types', 'include', 0],
        ordering: true,
      },
    ]);
  });

  it('export their schema as JSON Schema for editors', () => {
    const schema = z.toJSONSchema(kind.manifest.schema, { io: 'input', unrepresentable: 'any' }) as {
      required?: string[];
    };
    expect(schema.required).toEqual(['tag', 'name']);
  });
});

describe('Initiatives against a scorecard the repository declares (offline)', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  });
  const repo = async (files: Record<string, string>): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'cortex-sync-scorecard-parse-'));
    dirs.push(dir);
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await writeFile(join(dir, file), text);
    }
    return dir;
  };
  const validate = async (dir: string) =>
    (await validateManifests(dir, { signal: new AbortController().signal })).diagnostics;

  const INITIATIVE = `name: Gold for all
scorecardTag: prod-readiness
targetDate: "2099-12-31"
isDraft: false
emphasizedLevels:
  - rank: 1
  - rank: 3
emphasizedRules:
  - expression: links("runbook").length > 0
  - expression: git!= null
`;

  it('a level rank or a rule expression the scorecard lacks is an error at the Initiative, naming the scorecard file', async () => {
    const dir = await repo({
      '.cortex/scorecards/prod.yaml': MANIFEST,
      '.cortex/initiatives/gold.yaml': INITIATIVE,
    });
    // (The custom entity types the scorecard's filters name are warnings offline: plan checks them.)
    expect((await validate(dir)).filter((d) => d.severity === 'error')).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'initiative-scorecard-mismatch',
        file: '.cortex/initiatives/gold.yaml',
        line: 7,
        field: 'emphasizedLevels[1].rank',
        message:
          'rank 3 is not a level of scorecard `prod-readiness` (.cortex/scorecards/prod.yaml:1), whose levels are 1 Gold, 2 Silver: Cortex would refuse this Initiative',
      }),
      expect.objectContaining({
        file: '.cortex/initiatives/gold.yaml',
        line: 10,
        field: 'emphasizedRules[1].expression',
        message: expect.stringMatching(
          /^`git!= null` is not a rule of scorecard `prod-readiness` \(\.cortex\/scorecards\/prod\.yaml:1\) \(did you mean `git != null`\?\)/,
        ),
      }),
    ]);
  });

  it('a scorecard without a ladder has no level to emphasize; one the repository does not declare is left to plan', async () => {
    const dir = await repo({
      '.cortex/scorecards/points.yaml': 'tag: prod-readiness\nname: Points\nrules:\n  - {expression: git != null}\n',
      '.cortex/initiatives/gold.yaml': INITIATIVE.replace('  - rank: 3\n', '')
        .replace('  - expression: git!= null\n', '')
        .replace('links("runbook").length > 0', 'git != null'),
      '.cortex/initiatives/elsewhere.yaml': INITIATIVE.replace('Gold for all', 'Elsewhere').replace(
        'prod-readiness',
        'workspace-only',
      ),
    });
    const diagnostics = await validate(dir);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([
      expect.objectContaining({
        field: 'emphasizedLevels[0].rank',
        message: expect.stringContaining('which has no levels'),
      }),
    ]);
    // The workspace's scorecard: a warning that plan checks it, no level or rule judged here.
    expect(diagnostics.filter((d) => d.file === '.cortex/initiatives/elsewhere.yaml')).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'unknown-reference', field: 'scorecardTag' }),
    ]);
  });

  it('a scorecard declared twice, in two files, is an error naming both', async () => {
    const dir = await repo({
      '.cortex/scorecards/a.yaml': MANIFEST,
      '.cortex/scorecards/nested/b.yaml': MANIFEST.replace('Production readiness', 'Again'),
    });
    expect(await validate(dir)).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'duplicate-id',
        file: '.cortex/scorecards/nested/b.yaml',
        message:
          'scorecard `prod-readiness` is declared 2 times: .cortex/scorecards/a.yaml:1, .cortex/scorecards/nested/b.yaml:1',
      }),
    );
  });

  it('two tags that differ only in case are a warning naming both', async () => {
    const dir = await repo({
      '.cortex/scorecards/a.yaml': 'tag: Prod\nname: A\n',
      '.cortex/scorecards/b.yaml': 'tag: prod\nname: B\n',
    });
    const diagnostics = await validate(dir);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'warning', code: 'case-only-id', message: expect.stringContaining('Prod') }),
    );
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('a scorecard file that is a symlink is not read; a YAML alias bomb is refused by the loader', async () => {
    const outside = await repo({ 'secret.yaml': MANIFEST });
    const dir = await repo({});
    await mkdir(join(dir, '.cortex/scorecards'), { recursive: true });
    await symlink(join(outside, 'secret.yaml'), join(dir, '.cortex/scorecards/link.yaml'));
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 9 }, (_, i) => {
        const prev = String.fromCharCode(97 + i);
        const next = String.fromCharCode(98 + i);
        return `${next}: &${next} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`;
      }),
      'tag: bomb',
      'name: Bomb',
    ].join('\n');
    await writeFile(join(dir, '.cortex/scorecards/bomb.yaml'), `${bomb}\n`);
    const diagnostics = await validate(dir);
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ severity: 'error', code: 'unreadable-manifest', file: '.cortex/scorecards/link.yaml' }),
    );
    expect(diagnostics).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        file: '.cortex/scorecards/bomb.yaml',
        code: expect.stringMatching(/^yaml/),
      }),
    );
  });

  it('a huge rule expression is checked quickly and suggested nothing', async () => {
    const huge = `custom("${'x'.repeat(200_000)}") != null`;
    const dir = await repo({
      '.cortex/scorecards/prod.yaml': `tag: prod-readiness\nname: P\nrules:\n  - expression: '${huge}'\n  - expression: '${huge}y'\n`,
      '.cortex/initiatives/gold.yaml': `name: G\nscorecardTag: prod-readiness\ntargetDate: "2099-12-31"\nisDraft: false\nemphasizedRules:\n  - expression: '${huge}z'\n`,
    });
    const started = performance.now();
    const diagnostics = await validate(dir);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'initiative-scorecard-mismatch',
        message: expect.not.stringContaining('did you mean'),
      }),
    ]);
  });
});
