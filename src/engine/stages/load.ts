/**
 * `load`: the manifests read, parsed and checked per file (strict schemas, duplicates, layout);
 * any error (every warning, in strict mode) ends the run as `invalid` before anything is read from
 * the API.
 */
import { hasErrors } from '../../core/model.js';
import { strictly } from '../../core/strict.js';
import { loadManifests } from '../../source/load.js';
import type { Stage } from './run.js';

export const load: Stage = async (run, ctx) => {
  const { config, session } = ctx;
  const loaded = await loadManifests(config.dir, ctx.handlers, {
    now: ctx.clock.now(),
    ...(session.manifestCache ? { cache: session.manifestCache } : {}),
    ...(run.onlyNotedChanges ? { onlyNotedChanges: true } : {}),
    ...(config.allowEmpty === true ? { allowEmpty: true } : {}),
  });
  // Strict mode: every warning is an error, those of the manifests first (nothing is read then).
  const diagnostics = strictly(loaded.diagnostics, config.strict);
  const next = { ...run, loaded: { desired: loaded.objects, diagnostics } };
  return hasErrors(diagnostics) ? { ...next, pass: { status: 'invalid', diagnostics } } : next;
};
