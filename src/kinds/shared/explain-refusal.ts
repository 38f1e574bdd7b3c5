/**
 * An API refusal of a change (a 4xx) as a diagnostic located in its manifest: at the field the
 * API's message most likely concerns (by patterns each kind gives), else at the document's start.
 * A server failure (5xx), a failure that is not the API's, or a change with no manifest (a
 * removal) explains nothing: the executor reports it as it is. Pure.
 */
import { isApiError } from '../../core/errors.js';
import type { Diagnostic, ParsedDocument } from '../../core/model.js';

/** How one kind explains the API's refusals. */
export interface RefusalExplanation {
  kind: string;
  /** How the message names the object: `Initiative "q3"`, `scorecard dora`. */
  name(id: string): string;
  /** Which manifest field a message concerns, by the first pattern it matches (none: the document). */
  fieldHints: readonly (readonly [RegExp, string])[];
  /** Statuses below 500 that are no fault of the manifest (a 403: a permission), explained as nothing. */
  notTheManifest?: readonly number[];
}

/** A change as the explanation reads it: its id and, when it writes one, its manifest. */
interface ExplainedChange {
  id: string;
  desired?: { doc: ParsedDocument } | undefined;
}

/** The kind's `write.explainFailure`, built from how it names objects and locates fields. */
export const explainRefusal =
  (how: RefusalExplanation) =>
  (change: ExplainedChange, error: Error): Diagnostic[] => {
    const doc = change.desired?.doc;
    if (!doc || !isApiError(error) || error.status === undefined || error.status >= 500) return [];
    if (how.notTheManifest?.includes(error.status)) return [];
    const text = error.apiMessage ?? '';
    const field = how.fieldHints.find(([pattern]) => pattern.test(text))?.[1];
    const at = field ? doc.locate([field]) : { line: doc.line, column: doc.column };
    return [
      {
        severity: 'error',
        code: 'api-violation',
        message: `Cortex refused ${how.name(change.id)} (HTTP ${error.status})${text ? `: ${text}` : ''}`,
        file: doc.file,
        line: at.line,
        column: at.column,
        ...(field ? { field } : {}),
        kind: how.kind,
        id: change.id,
      },
    ];
  };
