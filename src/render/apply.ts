/**
 * The result of an apply for a terminal: one summary line (the run's outcome line when given,
 * else counts of ok/failed/skipped), the write requests and time, then every failure (with its
 * error and located diagnostics) and what was skipped because of it. An interrupted apply
 * summarises what was done and not done per kind instead of listing every object: the plan log
 * lists each one, and the report says where it is. Ownership-record writes are shown under
 * their own name.
 */
import { type ApplyReport, type ChangeResult, type ObjectKey, objectKey, type StepKind } from '../core/model.js';
import type { RunOutcomeName } from '../core/outcome.js';
import { countOf } from '../core/plural.js';
import { printable } from '../core/printable.js';
import { renderDiagnostics } from './diagnostics.js';
import { painter } from './style.js';

/** Changes skipped because of a failure, listed one by one before the rest are counted. */
const SKIPPED_LISTED = 20;

const VERB: Record<string, string> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
  archive: 'archived',
};

/** `entity: 268 created, 116 updated; 1166 not done` per kind, in the order the report lists them. */
const perKindLines = (results: readonly ChangeResult[]): string[] => {
  const byKind = new Map<StepKind, { done: Map<string, number>; failed: number; skipped: number }>();
  for (const r of results) {
    const entry = byKind.get(r.change.kind) ?? { done: new Map<string, number>(), failed: 0, skipped: 0 };
    if (r.outcome === 'ok') entry.done.set(r.change.action, (entry.done.get(r.change.action) ?? 0) + 1);
    else if (r.outcome === 'failed') entry.failed += 1;
    else entry.skipped += 1;
    byKind.set(r.change.kind, entry);
  }
  return [...byKind].map(([kind, c]) => {
    const done = [...c.done].map(([action, n]) => `${n} ${VERB[action] ?? action}`);
    const parts = [done.length > 0 ? done.join(', ') : 'none done'];
    if (c.failed > 0) parts.push(`${c.failed} failed`);
    if (c.skipped > 0) parts.push(`${c.skipped} not done`);
    return `  ${kind}: ${parts.join('; ')}`;
  });
};

/** Renders an apply report; ends with a newline. Noop results (if any) are not counted. */
export function renderApplyReport(
  report: ApplyReport,
  options: {
    color: boolean;
    /** The run report's outcome line, shown first. */
    summaryLine?: string;
    /** The run report's outcome: green only when `applied`. */
    outcome?: RunOutcomeName;
    /** Write requests of the whole run (the apply lease's included), when known. */
    runWrites?: number;
  },
): string {
  const paint = painter(options.color);
  const results = report.results.filter((r) => r.change.action !== 'noop');
  const count = (o: ChangeResult['outcome']): number => results.filter((r) => r.outcome === o).length;
  const ok = count('ok');
  const failed = count('failed');
  const skipped = count('skipped');
  const outcomeOf = new Map<ObjectKey, ChangeResult['outcome']>(
    results.map((r) => [objectKey(r.change.kind, r.change.id), r.outcome]),
  );

  const lines: string[] = [];
  const inventory = report.inventory ?? [];
  const clean =
    options.outcome !== undefined
      ? options.outcome === 'applied'
      : failed + skipped === 0 && inventory.every((r) => r.outcome === 'ok') && !report.interrupted;
  const head = report.interrupted ? 'Apply interrupted' : clean ? 'Apply complete' : 'Apply finished with problems';
  const leaseWrites = Math.max(0, (options.runWrites ?? report.writeRequests) - report.writeRequests);
  const sent = `${countOf(report.writeRequests, 'write request')} in ${(report.durationMs / 1000).toFixed(1)} s${leaseWrites > 0 ? `, and ${leaseWrites} to hold the apply lease` : ''}`;
  if (options.summaryLine !== undefined) {
    lines.push(paint(['bold', clean ? 'green' : 'red'], options.summaryLine));
    lines.push(paint('dim', `Sent ${sent}.`));
  } else {
    lines.push(
      paint(['bold', clean ? 'green' : 'red'], `${head}: ${ok} ok, ${failed} failed, ${skipped} skipped (${sent}).`),
    );
  }

  if (report.interrupted) lines.push(...perKindLines(results));
  for (const r of inventory) {
    const what = `${r.write.action} inventory/${printable(r.write.id)} (ownership record, ${r.write.phase} the changes)`;
    const error = r.error === undefined ? undefined : printable(r.error);
    if (r.outcome === 'ok' && report.interrupted) lines.push(`  ${paint('green', `✓ ${what}`)}: done`);
    else if (r.outcome === 'failed') lines.push(`  ${paint('red', `✗ ${what}`)}: ${error ?? 'failed'}`);
    else if (r.outcome === 'skipped') lines.push(`  ${paint('yellow', `- ${what}`)}: not done (${error ?? 'skipped'})`);
  }
  let skippedListed = 0;
  let skippedUnlisted = 0;
  for (const r of results) {
    const what = `${r.change.action} ${r.change.kind}/${printable(r.change.id)}`;
    const error = r.error === undefined ? undefined : printable(r.error);
    if (r.outcome === 'failed') {
      lines.push(`  ${paint('red', `✗ ${what}`)}: ${error ?? 'failed'}`);
      if (r.diagnostics && r.diagnostics.length > 0) {
        const text = renderDiagnostics(r.diagnostics, options);
        for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
      }
    } else if (r.outcome === 'skipped') {
      // Stopped: the per-kind lines count them, the plan log names each one.
      if (report.interrupted && r.blockedBy === undefined) continue;
      if (skippedListed >= SKIPPED_LISTED) {
        skippedUnlisted += 1;
        continue;
      }
      skippedListed += 1;
      let why = error ?? 'skipped';
      if (r.blockedBy !== undefined) {
        const blocker = outcomeOf.get(r.blockedBy);
        const state = blocker === 'failed' ? 'failed' : blocker === 'skipped' ? 'was skipped' : 'did not complete';
        why = `skipped: waits for ${printable(r.blockedBy)}, which ${state}`;
      }
      lines.push(`  ${paint('yellow', `- ${what}`)}: ${why}`);
    } else if (r.diagnostics && r.diagnostics.length > 0) {
      lines.push(`  ${paint('yellow', `! ${what}`)}: applied, with warnings from the API`);
      const text = renderDiagnostics(r.diagnostics, options);
      for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
    }
  }
  if (skippedUnlisted > 0)
    lines.push(
      `  ${paint('yellow', `… and ${countOf(skippedUnlisted, 'other skipped change')}`)} (the plan log names each)`,
    );
  if (report.planLogFile !== undefined) {
    const what = report.interrupted ? 'Every change, done or not, is in the plan log' : 'Plan log';
    lines.push(paint('dim', `${what}: ${printable(report.planLogFile)}`));
  }
  return `${lines.join('\n')}\n`;
}
