/**
 * What a scorecard write keeps from the live scorecard (pure). A write replaces the whole
 * scorecard, and the fields the server fills in on its own (`draft`, the settings, the ladder's
 * name, level colours, each rule's `title`, `weight` and `filter`, a filter's `kind` and
 * `category`) are compared only when the manifest states them. So a write sends, for each such
 * field the manifest leaves out, the value the live scorecard has: the apply changes nothing the
 * plan did not show. No server default is guessed (the vendor's OpenAPI documents none of them but
 * a rule weight "defaults to 1" with levels); the plan says what is kept (`write.keptOnWrite`).
 */
import type { DesiredObject, JsonObject, JsonValue, LiveObject } from '../../core/model.js';
import { statedIn } from './normalize.js';
import type { LiveScorecard, ScorecardManifest } from './schema.js';
import { scorecardManifestDocument } from './to-manifest.js';

/** Top-level fields kept, each named by its path with its value (`notifications.enabled`). */
interface Kept {
  spec: ScorecardManifest;
  /** `draft: true`, `notifications.enabled: false`, `ladder.name: "Steps"`. */
  fields: string[];
  /** Per field of levels and rules (`each rule's weight`), how many were kept. */
  counted: Map<string, number>;
}

const SETTING_GROUPS = ['notifications', 'exemptions', 'evaluation'] as const;

const asObject = (value: JsonValue | undefined): JsonObject | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;

/** A value as the plan's reason shows it: the renderers escape it (once) where printed. */
const shown = (value: JsonValue): string => (typeof value === 'string' ? `"${value}"` : JSON.stringify(value));

/** `spec` with every server-filled field it leaves out taken from `live`, and what was taken. */
export const withLiveKept = (spec: ScorecardManifest, live: LiveScorecard): Kept => {
  const doc = scorecardManifestDocument({ kind: 'scorecard', id: live.tag, state: live });
  const out = structuredClone(spec) as ScorecardManifest & Record<string, unknown>;
  const fields: string[] = [];
  const counted = new Map<string, number>();
  const count = (what: string): void => {
    counted.set(what, (counted.get(what) ?? 0) + 1);
  };
  const stated = statedIn(spec);
  if (!stated.draft && typeof live.draft === 'boolean') {
    out.draft = live.draft;
    fields.push(`draft: ${live.draft}`);
  }
  for (const group of SETTING_GROUPS) {
    const liveGroup = asObject(doc[group]);
    for (const [key, value] of Object.entries(liveGroup ?? {})) {
      if (stated.settings[group].has(key)) continue;
      out[group] = { ...(out[group] ?? {}), [key]: value } as never;
      fields.push(`${group}.${key}: ${shown(value)}`);
    }
  }
  const liveFilter = asObject(doc.filter);
  if (out.filter !== undefined) keepFilterLabels(out.filter, liveFilter, 'filter', fields.push.bind(fields));
  if (out.ladder !== undefined) {
    const liveLadder = asObject(doc.ladder);
    if (out.ladder.name === undefined && typeof liveLadder?.name === 'string') {
      out.ladder.name = liveLadder.name;
      fields.push(`ladder.name: ${shown(liveLadder.name)}`);
    }
    const liveLevels = (liveLadder?.levels ?? []) as JsonObject[];
    for (const level of out.ladder.levels) {
      const color = liveLevels.find((l) => l.rank === level.rank)?.color;
      if (level.color === undefined && typeof color === 'string') {
        level.color = color;
        count("each level's colour");
      }
    }
  }
  const liveRules = (doc.rules ?? []) as JsonObject[];
  for (const rule of out.rules) {
    const match = liveRules.find((r) => r.expression === rule.expression);
    if (match === undefined) continue;
    if (rule.title === undefined && typeof match.title === 'string') {
      rule.title = match.title;
      count("each rule's title");
    }
    if (rule.weight === undefined && typeof match.weight === 'number') {
      rule.weight = match.weight;
      count("each rule's weight");
    }
    const matchFilter = asObject(match.filter);
    if (rule.filter === undefined && matchFilter !== undefined) {
      rule.filter = matchFilter as never;
      count("each rule's filter");
    } else if (rule.filter !== undefined)
      keepFilterLabels(rule.filter, matchFilter, '', () => count("each rule's filter"));
  }
  return { spec: out, fields, counted };
};

/** A stated filter's `kind` and `category`, when left out, taken from the live one. */
const keepFilterLabels = (
  filter: { kind?: string; category?: string },
  live: JsonObject | undefined,
  at: string,
  said: (field: string) => void,
): void => {
  for (const key of ['kind', 'category'] as const) {
    const value = live?.[key];
    if (filter[key] !== undefined || typeof value !== 'string') continue;
    filter[key] = value;
    said(`${at}.${key}: ${shown(value)}`);
  }
};

/**
 * The plan's words for what an update keeps: `keeps as live what the manifest leaves out: draft:
 * true, notifications.enabled: false; each rule's weight (2)`. Undefined when nothing is kept.
 */
export const keptOnWrite = (
  obj: DesiredObject<ScorecardManifest>,
  live: LiveObject<LiveScorecard>,
): string | undefined => {
  if ((live.state as { listedOnly?: unknown }).listedOnly === true) return undefined;
  const { fields, counted } = withLiveKept(obj.spec, live.state);
  const parts = [...fields, ...[...counted].map(([what, n]) => `${what} (${n})`)];
  return parts.length > 0 ? `keeps as live what the manifest leaves out: ${parts.join(', ')}` : undefined;
};
