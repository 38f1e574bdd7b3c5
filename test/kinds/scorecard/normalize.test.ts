/**
 * What a plan compares of a scorecard: equal whatever a server rewrites when it stores one
 * (defaults it fills in, key and list order, colour spelling, rule identifiers), different where
 * the manifest says otherwise; and what export writes of one loads back as equal.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { diffValues } from '../../../src/core/diff.js';
import { fieldLine } from '../../../src/render/text.js';
import type { DesiredObject, LiveObject } from '../../../src/core/model.js';
import { scorecardKind as kind } from '../../../src/kinds/scorecard/index.js';
import {
  type LiveScorecard,
  liveScorecardSchema,
  type ScorecardManifest,
} from '../../../src/kinds/scorecard/schema.js';
import { toManifestFiles } from '../../../src/kinds/scorecard/to-manifest.js';
import { manifestText } from '../../../src/export/render.js';
import { yamlDoc } from '../initiative/yaml-doc.js';

const AT = { now: 0 };

const MANIFEST = `tag: prod
name: Production
description: The bar
filter:
  types: {include: [service, api]}
ladder:
  levels:
    - {name: Gold, rank: 1, color: "#FFD700"}
    - {name: Silver, rank: 2}
rules:
  - {title: Runbook, expression: links("runbook").length > 0, level: Gold}
  - {expression: git != null, level: Silver, filter: {category: SERVICE}}
`;

/** The same scorecard as a server answers it: every default filled in, its own order and spelling. */
const SERVED = `rules:
  - expression: git != null
    level: Silver
    weight: 1
    title: git != null
    identifier: 8d3c0f6a-0000-4000-8000-000000000001
    filter: {category: SERVICE}
  - expression: links("runbook").length > 0
    level: Gold
    weight: 1
    title: Runbook
    identifier: 8d3c0f6a-0000-4000-8000-000000000002
ladder:
  name: Default Ladder
  levels:
    - {rank: 2, name: Silver, color: "#C0C0C0"}
    - {rank: 1, name: Gold, color: ffd700}
filter: {kind: GENERIC, types: {include: [api, service]}}
evaluation: {window: 4}
exemptions: {enabled: true, autoApprove: false}
notifications: {enabled: true, scoreDropNotificationsEnabled: false}
draft: false
description: The bar
name: Production
tag: prod
lastUpdated: 2026-01-01T00:00:00Z
`;

const desiredOf = (text: string): DesiredObject<ScorecardManifest> => {
  const result = kind.manifest.parse(yamlDoc(text, '.cortex/scorecards/prod.yaml'), AT);
  expect(result.diagnostics).toEqual([]);
  return result.objects[0] as DesiredObject<ScorecardManifest>;
};
const liveOf = (text: string): LiveObject<LiveScorecard> => {
  const state = liveScorecardSchema.parse(parseYaml(text));
  return { kind: 'scorecard', id: state.tag, state };
};
const diff = (manifest: string, served: string) => {
  const desired = desiredOf(manifest);
  return diffValues(kind.live.canonical(liveOf(served), desired), kind.manifest.canonical(desired));
};

describe('scorecard comparison', () => {
  it('finds nothing to do when the server only filled in defaults, reordered and respelled', () => {
    expect(diff(MANIFEST, SERVED)).toEqual([]);
  });

  it('compares what the manifest states of what the server fills in', () => {
    const stated = MANIFEST.replace('name: Production\n', 'name: Production\ndraft: true\nevaluation: {window: 12}\n')
      .replace('{name: Silver, rank: 2}', '{name: Silver, rank: 2, color: "#000000"}')
      .replace('level: Gold}', 'level: Gold, weight: 5}');
    expect(diff(stated, SERVED)).toEqual([
      { path: 'draft', before: false, after: true },
      { path: 'evaluation.window', before: 4, after: 12 },
      { path: 'ladder.levels.2.color', before: 'c0c0c0', after: '000000' },
      { path: 'rules["links(\\"runbook\\").length > 0"].weight', before: 1, after: 5 },
    ]);
  });

  it('shows what the manifest removes or changes as field diffs', () => {
    const changed = MANIFEST.replace('description: The bar\n', '')
      .replace('include: [service, api]', 'include: [service]')
      .replace('  - {expression: git != null, level: Silver, filter: {category: SERVICE}}\n', '');
    expect(diff(changed, SERVED)).toEqual([
      { path: 'description', before: 'The bar', after: null },
      { path: 'filter.types.include', before: ['api', 'service'], after: ['service'] },
      { path: 'rules["git != null"].level', before: 'Silver' },
    ]);
  });

  it('prints control characters of rule expressions and titles escaped in a plan', () => {
    const hostile = MANIFEST.replace(
      '{title: Runbook, expression: links("runbook").length > 0, level: Gold}',
      '{title: "\\e[2Jwiped", expression: "git != null \\e]8;;http://x\\a", level: Gold}',
    );
    const lines = diff(hostile, SERVED).map((d) => fieldLine(d));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).toContain('\\u001b');
    for (const line of lines) expect(line).not.toMatch(/\p{Cc}/u);
  });

  it('reads a descriptor answered as text, as a JSON string or as an object alike', () => {
    const fromText = liveScorecardSchema.parse(parseYaml(SERVED));
    const fromObject = liveScorecardSchema.parse(JSON.parse(JSON.stringify(fromText)));
    expect(fromObject).toEqual(fromText);
    // A field of an unexpected type reads as absent rather than failing the plan.
    const odd = liveScorecardSchema.parse({ ...fromText, draft: 'no', evaluation: 'daily' });
    expect(odd.draft).toBeNull();
    expect(odd.evaluation).toBeNull();
  });
});

describe('scorecard export', () => {
  it('writes what the server answers as a manifest that loads back with nothing to do', () => {
    const live = liveOf(SERVED);
    const [file] = toManifestFiles([live]);
    expect(file?.path).toBe('.cortex/scorecards/prod.yaml');
    const text = manifestText('scorecard', file?.document ?? null);
    expect(text).not.toContain('identifier');
    expect(text).not.toContain('lastUpdated');
    const desired = desiredOf(text.split('\n').slice(1).join('\n'));
    expect(diffValues(kind.live.canonical(live, desired), kind.manifest.canonical(desired))).toEqual([]);
    // The settings the server filled in are written, so they stay as they are.
    expect(desired.spec).toMatchObject({
      draft: false,
      evaluation: { window: 4 },
      ladder: { name: 'Default Ladder' },
    });
  });

  it('refuses to write a scorecard it only listed (its rules were never read)', () => {
    const listed: LiveObject<LiveScorecard> = {
      kind: 'scorecard',
      id: 'x',
      state: { tag: 'x', name: 'X', listedOnly: true } as LiveScorecard,
    };
    expect(() => toManifestFiles([listed])).toThrow(/only listed, not read/);
  });
});
