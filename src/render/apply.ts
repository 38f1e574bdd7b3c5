/**
 * The result of an apply for a terminal: counts of ok/failed/skipped, then every failure (with its
 * error and located diagnostics) and every skip (with the change that blocked it).
 */
import { type ApplyReport, type ChangeResult, type ObjectKey, objectKey } from '../core/model.js';
import { renderDiagnostics } from './diagnostics.js';
import { painter } from './style.js';

/** Renders an apply report; ends with a newline. Noop results (if any) are not counted. */
export function renderApplyReport(report: ApplyReport, options: { color: boolean }): string {
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
  const head = failed + skipped === 0 ? 'Apply complete' : 'Apply finished with problems';
  const seconds = (report.durationMs / 1000).toFixed(1);
  const counts = `${ok} ok, ${failed} failed, ${skipped} skipped`;
  const headline = `${head}: ${counts} (${report.writeRequests} write request(s), ${seconds} s).`;
  lines.push(paint(['bold', failed + skipped === 0 ? 'green' : 'red'], headline));

  for (const r of results) {
    const what = `${r.change.action} ${r.change.kind}/${r.change.id}`;
    if (r.outcome === 'failed') {
      lines.push(`  ${paint('red', `✗ ${what}`)}: ${r.error ?? 'failed'}`);
      if (r.diagnostics && r.diagnostics.length > 0) {
        const text = renderDiagnostics(r.diagnostics, options);
        for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
      }
    } else if (r.outcome === 'skipped') {
      let why = r.error ?? 'skipped';
      if (r.blockedBy !== undefined) {
        const blocker = outcomeOf.get(r.blockedBy);
        const state = blocker === 'failed' ? 'failed' : blocker === 'skipped' ? 'was skipped' : 'did not complete';
        why = `skipped: waits for ${r.blockedBy}, which ${state}`;
      }
      lines.push(`  ${paint('yellow', `- ${what}`)}: ${why}`);
    } else if (r.diagnostics && r.diagnostics.length > 0) {
      lines.push(`  ${paint('yellow', `! ${what}`)}: applied, with warnings from the API`);
      const text = renderDiagnostics(r.diagnostics, options);
      for (const line of text.trimEnd().split('\n')) lines.push(`      ${line}`);
    }
  }
  if (report.planLogFile !== undefined) lines.push(paint('dim', `Plan log: ${report.planLogFile}`));
  return `${lines.join('\n')}\n`;
}
