/** `cortex-sync validate`: offline, every manifest parsed and checked; no key, no request. */
import { countOf } from '../core/plural.js';
import { type Diagnostic, hasErrors } from '../core/model.js';
import { configureRun } from '../engine/config.js';
import { validateManifests } from '../engine/reconcile.js';
import { kindsFor } from '../kinds/registry.js';
import { renderDiagnostics } from '../render/index.js';
import { manifestText, writeLine } from '../runtime-io/io.js';
import { type CommonOptions, rootMissing, settingsOf } from './run-common.js';
import type { CliSession } from './session.js';

/**
 * The summary of a failed validate: the errors, the files they are in (a manifest, a YAML file no
 * kind reads, a path that could not be read), then what was read: `74 errors in 74 files; 4
 * manifest files read.`, `1 error in 1 file; 0 manifest files read, 1 path could not be read.`
 */
const errorSummary = (
  errors: readonly Diagnostic[],
  result: { files: readonly string[]; unreadable: readonly string[] },
): string => {
  const inFiles = new Set(errors.flatMap((d) => (d.file !== undefined ? [d.file] : []))).size;
  const where = inFiles > 0 ? ` in ${countOf(inFiles, 'file')}` : '';
  const unread = result.unreadable.length;
  const read = `${countOf(result.files.length, 'manifest file')} read${unread > 0 ? `, ${countOf(unread, 'path')} could not be read` : ''}`;
  return `${countOf(errors.length, 'error')}${where}; ${read}.`;
};

export const runValidate = async (o: CommonOptions, session: CliSession): Promise<number> => {
  const { io } = session;
  if (await rootMissing(o, session)) return 1;
  const { config: c, diagnostics: configDiagnostics } = await configureRun({ said: settingsOf(o) }, io.env, io.cwd);
  // The kinds as the run's settings configure them (a merge manifest may leave out its title).
  const result = await validateManifests(c.dir, { signal: session.stop, clock: session.clock }, kindsFor(c), {
    strict: c.strict === true,
    allowEmpty: o.allowEmpty === true,
  });
  const diagnostics = [...configDiagnostics, ...result.diagnostics];
  const failed = hasErrors(diagnostics);
  if (o.output === 'json') {
    writeLine(
      io.stdout,
      JSON.stringify(
        { valid: !failed, files: result.files.length, objects: result.objects.length, diagnostics },
        null,
        2,
      ),
    );
  } else {
    if (diagnostics.length)
      writeLine(io.stderr, renderDiagnostics(diagnostics, { color: session.colorErr, source: manifestText(c.dir) }));
    writeLine(
      failed ? io.stderr : io.stdout,
      failed
        ? errorSummary(
            diagnostics.filter((d) => d.severity === 'error'),
            result,
          )
        : `OK: ${countOf(result.objects.length, 'object')} in ${countOf(result.files.length, 'file')}.`,
    );
  }
  return failed ? 1 : 0;
};
