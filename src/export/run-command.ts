/**
 * `cortex-sync export`: writes the live workspace as manifests in the repository layout, so that
 * `plan` on the result shows no change. Sends GET requests only. Its flags are `command.ts`.
 */
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { openEngineContext } from '../engine/api-client.js';
import { countOf } from '../core/plural.js';
import { printable, printableOnce } from '../core/printable.js';
import { hasErrors, type KindName } from '../core/model.js';
import { CONFIG_FILE, configureRun, readConfigFile } from '../engine/config.js';
import { SETTINGS } from '../engine/settings.js';
import { KIND_HANDLERS, KIND_NAMES } from '../kinds/registry.js';
import { renderDiagnostics } from '../render/index.js';
import { type CliIo, useColor, writeLine } from '../runtime-io/io.js';
import { settingsSaid } from '../runtime-io/setting-options.js';
import type { ExportOptions } from './command.js';
import { type ExportFile, exportFiles } from './files.js';
import { checkConfigSourceId, checkOutDir } from './guard.js';
import { readWorkspaceForExport } from '../engine/export-read.js';
import { manifestYaml } from './render.js';
import { parseSchemaBase, schemaFilesToWrite } from './schema-ref.js';
import { manifestJsonSchemas } from '../schemas/json-schemas.js';
import { inferredSourceIdLine, ownersOf, soleOwner, unclaimedSourceLine } from './source-id.js';
import { writeExportFiles } from './write.js';

const summaryLine = (files: readonly ExportFile[], outDir: string): string => {
  const counts = new Map<KindName, number>();
  for (const file of files) counts.set(file.kind, (counts.get(file.kind) ?? 0) + file.ids.length);
  const titles = new Map(KIND_HANDLERS.map((h) => [h.kind, h.title]));
  const parts = KIND_NAMES.filter((k) => counts.has(k)).map((k) => countOf(counts.get(k) ?? 0, titles.get(k) ?? k));
  return `Exported ${parts.length > 0 ? parts.join(', ') : 'nothing'} in ${countOf(files.length, 'file')} to ${printable(outDir)}.`;
};

/** Runs the command; returns the exit code. Typed errors are thrown for the entrypoint to render. */
export const runExport = async (o: ExportOptions, io: CliIo): Promise<number> => {
  const colorErr = useColor(io.stderr, io.env);
  const outDir = resolve(io.cwd, o.out);
  const schemaBase = parseSchemaBase(o.schemaBase, io.cwd, outDir);
  const { config, diagnostics } = await configureRun(
    { said: { ...settingsSaid(o, SETTINGS), dir: outDir } },
    io.env,
    io.cwd,
  );
  if (diagnostics.length) writeLine(io.stderr, renderDiagnostics(diagnostics, { color: colorErr }));
  if (hasErrors(diagnostics)) return 1;
  const givenSourceId = o.sourceId ?? (io.env.CORTEX_SYNC_SOURCE_ID || undefined);
  const configFile = await readConfigFile(outDir);
  const fileSourceId = configFile.config.sourceId;
  checkConfigSourceId({ outDir, givenSourceId, fileSourceId });

  const kinds = new Set<KindName>(o.kinds ?? KIND_NAMES);
  const hasSettings = await access(join(outDir, CONFIG_FILE)).then(
    () => true,
    () => false,
  );
  // Whether the source id the export is for may be inferred from what is read (source-id.ts).
  const inferable =
    config.sourceId === undefined && fileSourceId === undefined && !hasSettings && o.only !== 'unmanaged';
  const ctx = openEngineContext(config, 'export reads the live workspace', io.stop ? { signal: io.stop } : {});
  try {
    const read = await readWorkspaceForExport(
      {
        handlers: KIND_HANDLERS,
        kinds,
        includeArchived: o.includeArchived ?? false,
        sourceId: config.sourceId,
        requestsPerMinute: config.requestsPerMinute,
        progress: (line) => writeLine(io.stderr, line),
        othersLeftOut: !inferable && o.includeOtherSources !== true,
      },
      ctx,
    );
    if (read.diagnostics.length) writeLine(io.stderr, renderDiagnostics(read.diagnostics, { color: colorErr }));
    // Nothing names the directory's source id: the export holds what the one source that manages
    // the objects read has, and claims that source only from the origin it is bound to (source-id.ts).
    const sole = inferable
      ? soleOwner(ownersOf(read.live, { kinds, includeArchived: o.includeArchived ?? false }))
      : undefined;
    const recordedOrigin = sole !== undefined ? read.recordedOrigins.get(sole) : undefined;
    const inferred = sole !== undefined && recordedOrigin === config.origin ? sole : undefined;
    const sourceId = config.sourceId ?? sole;
    const declared = await checkOutDir({
      outDir,
      handlers: KIND_HANDLERS,
      givenSourceId,
      fileSourceId,
      sourceId,
      live: read.live,
    });
    const selected = exportFiles(read.live, {
      handlers: KIND_HANDLERS,
      kinds,
      only: o.only,
      includeArchived: o.includeArchived ?? false,
      declared,
      ...(sourceId !== undefined ? { sourceId } : {}),
      ...(o.includeOtherSources ? { includeOtherSources: true } : {}),
      now: ctx.clock.now(),
      schemaBase,
    });
    // The source id given for this export, or the one inferred, is the repository's: say so in its settings file.
    const settingsId = givenSourceId ?? inferred;
    const settings =
      settingsId !== undefined && !hasSettings
        ? [{ path: CONFIG_FILE, text: manifestYaml({ sourceId: settingsId }) }]
        : [];
    const schemas = schemaFilesToWrite(schemaBase, manifestJsonSchemas());
    await writeExportFiles(
      outDir,
      [...selected.files, ...settings, ...schemas.map((s) => ({ ...s, generated: true }))],
      o.force ?? false,
    );

    writeLine(io.stdout, summaryLine(selected.files, outDir));
    if (inferred !== undefined) writeLine(io.stdout, inferredSourceIdLine(inferred));
    else if (sole !== undefined) writeLine(io.stdout, unclaimedSourceLine(sole, recordedOrigin, config.origin));
    if (selected.alreadyDeclared.length > 0) {
      writeLine(
        io.stdout,
        `Left out ${countOf(selected.alreadyDeclared.length, 'object')} the directory declares already.`,
      );
    }
    if (selected.managedElsewhere > 0) {
      writeLine(
        io.stdout,
        `Left out ${countOf(selected.managedElsewhere, 'object')} a repository manages (--only unmanaged).`,
      );
    }
    if (selected.otherSources.count > 0) {
      const ids = selected.otherSources.sourceIds.map((id) => `\`${printable(id)}\``).join(', ');
      writeLine(
        io.stdout,
        `Left out ${countOf(selected.otherSources.count, 'object')} other source ids manage (${ids}); pass --include-other-sources to export them too.`,
      );
    }
    if (read.notReadThrough > 0) {
      writeLine(
        io.stdout,
        `Read no dependency edges of ${countOf(read.notReadThrough, 'catalog object')} other source ids manage (an object's edges are left with it); pass --include-other-sources to read them too.`,
      );
    }
    for (const skip of selected.skipped) {
      const title = KIND_HANDLERS.find((h) => h.kind === skip.kind)?.title ?? skip.kind;
      writeLine(io.stderr, `Skipped ${title} \`${printable(skip.id)}\`: ${printableOnce(skip.reason)}`);
    }
    const stats = ctx.client.stats();
    writeLine(io.stderr, `${countOf(stats.requestsSent, 'API request')}, GET only.`);
    return 0;
  } finally {
    await ctx.close();
  }
};
