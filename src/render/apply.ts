/**
 * The result of an apply for a terminal: counts of ok/failed/skipped, then every failure (with its
 * error and located diagnostics) and every skip (with the change that blocked it). An interrupted
 * apply also lists what was done, so the user sees both halves. Ownership-record writes are shown
 * under their own name.
 */
import { type ApplyReport, type ChangeResult, type ObjectKey, objectKey } from '../core/model.js';
import { printable } from '../core/printable.js';
import { renderDiagnostics } from './diagnostics.js';
import { painter } from './style.js';

/** Renders an apply report; ends with a newline. Noop results (if any) are not counted. */
export function renderApplyReport(
  report: ApplyReport,
  options: { color: boolean; /** The run's outcome line (core/outcome), shown first. */ summaryLine?: string },
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
  const clean = failed + skipped === 0 && inventory.every((r) => r.outcome === 'ok') && !report.interrupted;
  const head = report.interrupted ? 'Apply interrupted' : clean ? 'Apply complete' : 'Apply finished with problems';
  const seconds = (report.durationMs / 1000).toFixed(1);
  const counts = `${ok} ok, ${failed} failed, ${skipped} skipped`;
  const headline = `${head}: ${counts} (${report.writeRequests} write request(s), ${seconds} s).`;
  if (options.summaryLine !== undefined) lines.push(paint(['bold', clean ? 'green' : 'red'], options.summaryLine));
  lines.push(paint(options.summaryLine !== undefined ? 'dim' : ['bold', clean ? 'green' : 'red'], headline));

  for (const r of inventory) {
    const what = `${r.write.action} inventory/${printable(r.write.id)} (ownership record, ${r.write.phase} the changes)`;
    const error = r.error === undefined ? undefined : printable(r.error);
    if (r.outcome === 'ok' && report.interrupted) lines.push(`  ${paint('green', `✓ ${what}`)}: done`);
    else if (r.outcome === 'failed') lines.push(`  ${paint('red', `✗ ${what}`)}: ${error ?? 'failed'}`);
    else if (r.outcome === 'skipped') lines.push(`  ${paint('yellow', `- ${what}`)}: not done (${error ?? 'skipped'})`);
  }
  for (const r of results) {
    const what = `${r.change.action} ${r.change.kind}/${printable(r.change.id)}`;
    const error = r.error === undefined ? undefined : printable(r.error);
    if (r.outcome === 'ok' && report.interrupted) {
      lines.push(`  ${paint('green', `✓ ${what}`)}: done`);
      continue;
    }
    if (r.outcome === 'failed') {
      lines.push(`  ${paint('red', `✗ ${what}`)}: ${error ?? 'failed'}`);
      if (r.diagnostics && r.diagnostics.length > 0) {
        const text = renderDiagnostics(r.diagnostics, options);
        for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
      }
    } else if (r.outcome === 'skipped') {
      let why = error ?? 'skipped';
      if (r.blockedBy !== undefined) {
        const blocker = outcomeOf.get(r.blockedBy);
        const state = blocker === 'failed' ? 'failed' : blocker === 'skipped' ? 'was skipped' : 'did not complete';
        why = `skipped: waits for ${printable(r.blockedBy)}, which ${state}`;
      }
      lines.push(`  ${paint('yellow', `- ${what}`)}: ${report.interrupted ? 'not done: ' : ''}${why}`);
    } else if (r.diagnostics && r.diagnostics.length > 0) {
      lines.push(`  ${paint('yellow', `! ${what}`)}: applied, with warnings from the API`);
      const text = renderDiagnostics(r.diagnostics, options);
      for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
    }
  }
  if (report.planLogFile !== undefined) lines.push(paint('dim', `Plan log: ${printable(report.planLogFile)}`));
  return `${lines.join('\n')}\n`;
}
