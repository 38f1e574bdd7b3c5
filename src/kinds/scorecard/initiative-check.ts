/**
 * Initiatives against the scorecards the repository declares: an Initiative's emphasized levels
 * must be ranks of its scorecard's ladder and its emphasized rules expressions of its scorecard's
 * rules, character for character, or Cortex refuses the Initiative at apply time. Checked offline
 * (validate) and before any write (plan), located at the Initiative's line and naming the
 * scorecard's file, so a scorecard change that breaks an Initiative is caught in review. An
 * Initiative whose scorecard lives only in the workspace is checked by Cortex alone.
 */
import type { DesiredObject, Diagnostic } from '../../core/model.js';
import { suggest } from '../../core/references.js';
import type { InitiativeManifest } from '../initiative/schema.js';
import type { ScorecardManifest } from './schema.js';

const SCORECARD = 'scorecard';
/** Expressions longer than this get no "did you mean" (the comparison grows with the square of the length). */
const SUGGEST_MAX_LENGTH = 200;
const INITIATIVE = 'initiative';

const where = (card: DesiredObject): string => `${card.source.file}:${card.source.line}`;

const levelsOf = (spec: ScorecardManifest): string =>
  (spec.ladder?.levels ?? [])
    .map((l) => `${l.rank} ${l.name}`)
    .sort()
    .join(', ');

const located = (
  initiative: DesiredObject<InitiativeManifest>,
  path: readonly (string | number)[],
  field: string,
  message: string,
): Diagnostic => {
  const at = initiative.doc.locate(path);
  return {
    severity: 'error',
    code: 'initiative-scorecard-mismatch',
    message,
    file: initiative.source.file,
    line: at.line,
    column: at.column,
    field,
    kind: INITIATIVE,
    id: initiative.id,
  };
};

/** Problems of one Initiative against the declared scorecard it names. */
const checkOne = (initiative: DesiredObject<InitiativeManifest>, card: DesiredObject<ScorecardManifest>) => {
  const spec = initiative.spec;
  const out: Diagnostic[] = [];
  const ranks = new Set((card.spec.ladder?.levels ?? []).map((l) => l.rank));
  spec.emphasizedLevels.forEach((level, i) => {
    if (ranks.has(level.rank)) return;
    const has = ranks.size > 0 ? `whose levels are ${levelsOf(card.spec)}` : 'which has no levels (no `ladder`)';
    out.push(
      located(
        initiative,
        ['emphasizedLevels', i, 'rank'],
        `emphasizedLevels[${i}].rank`,
        `rank ${level.rank} is not a level of scorecard \`${card.id}\` (${where(card)}), ${has}: Cortex would refuse this Initiative`,
      ),
    );
  });
  const expressions = card.spec.rules.map((r) => r.expression);
  const known = new Set(expressions);
  // Suggestions compare every pair of characters: only short expressions are compared.
  const short = expressions.filter((e) => e.length <= SUGGEST_MAX_LENGTH);
  spec.emphasizedRules.forEach((rule, i) => {
    if (known.has(rule.expression)) return;
    const near = rule.expression.length <= SUGGEST_MAX_LENGTH ? suggest(rule.expression, short) : undefined;
    const meant = near !== undefined ? ` (did you mean \`${near}\`?)` : '';
    out.push(
      located(
        initiative,
        ['emphasizedRules', i, 'expression'],
        `emphasizedRules[${i}].expression`,
        `\`${rule.expression}\` is not a rule of scorecard \`${card.id}\` (${where(card)})${meant}: an emphasized rule must equal one of its rule expressions character for character, or Cortex refuses the Initiative`,
      ),
    );
  });
  return out;
};

/** Every Initiative that names a scorecard the repository declares, checked against it. */
export const checkInitiativesAgainstScorecards = (desired: readonly DesiredObject[]): Diagnostic[] => {
  const cards = new Map<string, DesiredObject<ScorecardManifest>>();
  for (const obj of desired) {
    if (obj.kind === SCORECARD && !cards.has(obj.id)) cards.set(obj.id, obj as DesiredObject<ScorecardManifest>);
  }
  if (cards.size === 0) return [];
  const diagnostics: Diagnostic[] = [];
  for (const obj of desired) {
    if (obj.kind !== INITIATIVE) continue;
    const initiative = obj as DesiredObject<InitiativeManifest>;
    const card = cards.get(initiative.spec.scorecardTag);
    if (card !== undefined) diagnostics.push(...checkOne(initiative, card));
  }
  return diagnostics;
};
