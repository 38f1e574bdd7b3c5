/**
 * Durations as the interface writes them: `500ms`, `30s`, `1m`, `10m`, `1h`, and `0` (off).
 * Whole or decimal numbers with one unit; anything else is an error naming the value.
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

export class DurationError extends Error {
  constructor(value: string) {
    super(`expected a duration such as 500ms, 30s, 1m, 10m, 1h or 0, got '${value}'`);
    this.name = 'DurationError';
  }
}

/** Milliseconds in `value`; `0` (with or without a unit) is 0 = off. Throws `DurationError`. */
export const parseDuration = (value: string): number => {
  const text = value.trim();
  if (text === '0') return 0;
  const match = DURATION.exec(text);
  const amount = match?.[1];
  const unit = match?.[2];
  if (amount === undefined || unit === undefined) throw new DurationError(value);
  const ms = Math.round(Number(amount) * (UNIT_MS[unit] ?? Number.NaN));
  if (!Number.isFinite(ms)) throw new DurationError(value);
  return ms;
};

/** `90000` → `1.5m`: for logs and `/status`. */
export const formatDuration = (ms: number): string => {
  if (ms === 0) return '0';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000) return `${+(ms / 60_000).toFixed(2)}m`;
  if (ms >= 1000) return `${+(ms / 1000).toFixed(2)}s`;
  return `${ms}ms`;
};
