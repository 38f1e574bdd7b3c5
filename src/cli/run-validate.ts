/** `cortex-sync validate`: offline, every manifest parsed and checked; no key, no request. */
import { countOf } from '../core/plural.js';
import { hasErrors } from '../core/model.js';
import { configureRun } from '../engine/config.js';
import { validateManifests } from '../engine/reconcile.js';
import { renderDiagnostics } from '../render/index.js';
import { manifestText, writeLine } from '../runtime-io/io.js';
import { type CommonOptions, rootMissing, settingsOf } from './run-common.js';
import type { CliSession } from './session.js';

/** `3 files`, `1 file and 2 paths that could not be read`, `1 path that could not be read`. */
const placesChecked = (result: { files: readonly string[]; unreadable: readonly string[] }): string => {
  const unread = result.unreadable.length;
  const read = result.files.length > 0 || unread === 0 ? [countOf(result.files.length, 'file')] : [];
  return [...read, ...(unread > 0 ? [`${countOf(unread, 'path')} that could not be read`] : [])].join(' and ');
};

export const runValidate = async (o: CommonOptions, session: CliSession): Promise<number> => {
  const { io } = session;
  if (await rootMissing(o, session)) return 1;
  const { config: c, diagnostics: configDiagnostics } = await configureRun({ said: settingsOf(o) }, io.env, io.cwd);
  const result = await validateManifests(c.dir, { signal: session.stop }, undefined, {
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
        ? `${countOf(diagnostics.filter((d) => d.severity === 'error').length, 'error')} in ${placesChecked(result)}.`
        : `OK: ${countOf(result.objects.length, 'object')} in ${countOf(result.files.length, 'file')}.`,
    );
  }
  return failed ? 1 : 0;
};
