/** The parse context kind tests use: a fixed "now" (2026-03-01, UTC). */
import type { ParseContext } from '../../src/kinds/types.js';

export const AT: ParseContext = { now: Date.parse('2026-03-01T00:00:00Z') };
