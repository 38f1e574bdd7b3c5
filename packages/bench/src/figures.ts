/**
 * The benchmark's headline: each measured figure beside its floor (the least it could be: Node's
 * own start for the CLI, one read and one write for a one-file change, the no-op plan's requests
 * for an apply) and its target. Every scenario adds its rows to one list; `npm run bench` prints
 * them as one table and writes them to `bench/results.json` (`figures`).
 *
 * To add a row: push a `Figure` from the scenario that measures it (`figures.push({...})` in
 * `main.ts`, or return it in the scenario's `figures`); `judgeFigure` and `renderFigures` do the rest.
 */

export type Unit = 'ms' | 's' | 'MB' | 'requests' | '×' | '%';

export interface Figure {
  /** Stable key (results.json). */
  id: string;
  /** What was measured, in words (markdown). */
  figure: string;
  value: number;
  unit: Unit;
  /** The least the figure can be, in the same unit: measured beside it, or derived. */
  floor?: { value: number; what: string };
  /** The goal: at most `atMost` (in `unit`), or at most `timesFloor` × the floor. */
  target?: { atMost: number } | { timesFloor: number };
}

export interface JudgedFigure extends Figure {
  /** The value the target allows, in `unit`; undefined without a target. */
  limit?: number;
  /** Value ÷ floor; undefined without a floor (or a floor of 0). */
  ofFloor?: number;
  /** Undefined without a target. */
  met?: boolean;
}

export const judgeFigure = (f: Figure): JudgedFigure => {
  const limit =
    f.target === undefined
      ? undefined
      : 'atMost' in f.target
        ? f.target.atMost
        : f.floor !== undefined
          ? f.target.timesFloor * f.floor.value
          : undefined;
  return {
    ...f,
    ...(f.floor && f.floor.value > 0 ? { ofFloor: f.value / f.floor.value } : {}),
    ...(limit !== undefined ? { limit, met: f.value <= limit } : {}),
  };
};

const DIGITS: Record<Unit, number> = { ms: 0, s: 2, MB: 0, requests: 0, '×': 2, '%': 2 };

/** `412 ms`, `0.31 s`, `2,168 requests`, `1.05×`. */
export const formatValue = (value: number, unit: Unit): string => {
  const text = value.toLocaleString('en-US', {
    minimumFractionDigits: DIGITS[unit],
    maximumFractionDigits: DIGITS[unit],
  });
  return unit === '×' ? `${text}×` : `${text} ${unit}`;
};

const targetText = (f: JudgedFigure): string => {
  if (!f.target) return '';
  const at = f.limit !== undefined ? formatValue(f.limit, f.unit) : '?';
  return 'atMost' in f.target ? `≤ ${at}` : `≤ ${f.target.timesFloor}× floor = ${at}`;
};

/** The figures as a markdown table: figure, value, floor, value ÷ floor, target, verdict. */
export const renderFigures = (figures: readonly Figure[]): string => {
  const rows = figures
    .map(judgeFigure)
    .map((f) => [
      f.figure,
      formatValue(f.value, f.unit),
      f.floor ? `${formatValue(f.floor.value, f.unit)} (${f.floor.what})` : '',
      f.ofFloor !== undefined ? `${f.ofFloor.toFixed(2)}×` : '',
      targetText(f),
      f.met === undefined ? '' : f.met ? 'met' : '**MISSED**',
    ]);
  const header = ['figure', 'value', 'floor', '÷ floor', 'target', ''];
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
};
