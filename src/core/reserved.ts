/**
 * A declared object that would overwrite one of cortex-sync's own records in the workspace (its
 * ownership records and leases): a repository that could write another source's record could make
 * that source prune (or stop pruning) whatever it liked. Which names are reserved is the business
 * of the kinds whose objects the records are (`manifest.reservedFor`); this is the error. Pure.
 */
import type { DesiredObject, Diagnostic } from './model.js';

/** The error for a desired object that is (or would overwrite) one of cortex-sync's records: `what` names it. */
export const reservedObjectProblem = (obj: DesiredObject, what: string): Diagnostic => ({
  severity: 'error',
  code: 'reserved',
  message: `${what} is reserved for cortex-sync's ownership records and cannot be declared in a manifest`,
  file: obj.source.file,
  line: obj.source.line,
  column: obj.source.column,
  kind: obj.kind,
  id: obj.id,
});
