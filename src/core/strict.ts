/**
 * Strict mode (`--strict`, `strict: true`, the Action's `strict` input): every warning is an
 * error, so a run that would only warn refuses instead (Terraform's and kubectl's strict
 * validation). Pure.
 */
import type { Diagnostic } from './model.js';

/** What a warning made an error says after its own message. */
const STRICT_NOTE = '(a warning; strict mode makes it an error)';

/** `diagnostics` with every warning an error when `strict`; unchanged otherwise. */
export const strictly = (diagnostics: readonly Diagnostic[], strict: boolean | undefined): Diagnostic[] =>
  strict === true
    ? diagnostics.map((d) =>
        d.severity === 'warning' ? { ...d, severity: 'error', message: `${d.message} ${STRICT_NOTE}` } : d,
      )
    : [...diagnostics];
