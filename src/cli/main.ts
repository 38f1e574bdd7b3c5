/**
 * The `cortex-sync` command. A thin entrypoint: parse flags, resolve the configuration, call the
 * engine, render its result, return the exit code (0 ok, 1 error, 2 changes with
 * `plan --detailed-exitcode`). The only place that renders errors.
 */
import { join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { openEngineContext } from '../engine/api-client.js';
import type { ApiClient } from '../api/types.js';
import { ApiError, CortexSyncError, InterruptedError } from '../core/errors.js';
import { type Diagnostic, hasErrors, type Plan, type ReconcileResult } from '../core/model.js';
import { exitCodeOf, type PlanWork, pendingByKind, signalExitCode } from '../core/outcome.js';
import { countOf } from '../core/plural.js';
import { runEmulatorCommand } from '../emulator/cli.js';
import { MISSING_DEFINITION_MODES, type MissingDefinitionMode } from '../emulator/contract.js';
import { configureRun, type OperatorSettings, type SyncConfig } from '../engine/config.js';
import { type EventSink, systemClock } from '../engine/context.js';
import { type FilePlanLog, openPlanLog, type PlanLogSink } from '../engine/plan-log.js';
import { leaseTag } from '../engine/lease.js';
import { reconcile, validateManifests } from '../engine/reconcile.js';
import { renderApplyReport, renderDiagnostics } from '../render/index.js';
import { registerExportCommand } from '../export/command.js';
import { VERSION } from '../version.js';
import { registerWatchCommand } from '../watch/command.js';
import { registerWebhookRouteCommand } from '../webhook-route/command.js';
import { printable } from '../core/printable.js';
import { keysToRedact } from '../engine/api-key.js';
import { askToApply, canAsk } from './confirm.js';
import { KIND_HANDLERS } from '../kinds/registry.js';
import { ENVIRONMENT_HELP } from './help.js';
import {
  type CliIo,
  hostOf,
  manifestRootProblems,
  manifestText,
  stoppedBy,
  unreachableHint,
  useColor,
  writeLine,
} from '../runtime-io/io.js';
import { renderApplyJson, renderRunPlan } from './output.js';
import { cancelledLine } from './cancelled.js';
import { createApplyProgress, createReadProgress } from './progress.js';
import { createOutputRedaction, redactingPlanLog, withPrintableEvents } from './safe-output.js';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};
const nonNegativeInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number ≥ 0');
  return n;
};
/** The same bound as `concurrency` in cortex-sync.yaml and CORTEX_SYNC_CONCURRENCY. */
const concurrency = (value: string): number => {
  const n = positiveInt(value);
  if (n > 64) throw new InvalidArgumentError('expected at most 64');
  return n;
};
const port = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number 0–65535');
  return n;
};

interface CommonOptions {
  dir?: string;
  debug?: boolean;
  sourceId?: string;
  baseUrl?: string;
  prune?: boolean;
  allowMassDelete?: boolean;
  allowTakeover?: boolean;
  concurrency?: number;
  forceEntityTypeSchema?: boolean;
  breakLease?: boolean;
  output?: 'text' | 'json' | 'markdown';
}

/** The options of `cortex-sync emulator`. */
interface EmulatorFlags {
  port: number;
  host: string;
  data?: string;
  rateLimit?: number;
  missingDefinition: MissingDefinitionMode;
}

/** What the flags of a command say, by the names every runtime uses (`engine/config.ts`). */
const settingsOf = (o: CommonOptions): OperatorSettings => ({
  dir: o.dir,
  sourceId: o.sourceId,
  baseUrl: o.baseUrl,
  prune: o.prune,
  allowMassDelete: o.allowMassDelete,
  allowTakeover: o.allowTakeover,
  concurrency: o.concurrency,
  forceEntityTypeSchema: o.forceEntityTypeSchema,
  breakLease: o.breakLease,
});

/** Why plan and apply need a key. */
const NEEDS_KEY = 'plan and apply read the live workspace';

export const runCli = async (argv: readonly string[], processIo: CliIo): Promise<number> => {
  /** Every byte printed goes through the redaction of the API key (`safe-output.ts`). */
  const redaction = createOutputRedaction(keysToRedact(processIo.env, processIo.cwd));
  const io: CliIo = {
    ...processIo,
    stdout: redaction.wrap(processIo.stdout),
    stderr: redaction.wrap(processIo.stderr),
  };
  let exitCode = 0;
  let debug = argv.includes('--debug');
  /** Never aborted when the caller cannot stop the run. */
  const stop = io.stop ?? new AbortController().signal;
  const colorOut = useColor(io.stdout, io.env);
  const colorErr = useColor(io.stderr, io.env);

  /** A manifest root (flag, CORTEX_SYNC_DIR or the current directory) that is missing or a file: said, true. */
  const rootMissing = async (o: CommonOptions): Promise<boolean> => {
    const root = resolve(io.cwd, o.dir ?? io.env.CORTEX_SYNC_DIR ?? '.');
    const problems = await manifestRootProblems(root, o.dir !== undefined ? '--dir' : 'the manifest root');
    if (problems.length) writeLine(io.stderr, renderDiagnostics(problems, { color: colorErr }));
    return problems.length > 0;
  };
  const config = async (o: CommonOptions): Promise<SyncConfig | undefined> => {
    if (await rootMissing(o)) return undefined;
    const { config, diagnostics } = await configureRun({ said: settingsOf(o) }, io.env, io.cwd);
    redaction.add(config.apiKey);
    if (diagnostics.length) writeLine(io.stderr, renderDiagnostics(diagnostics, { color: colorErr }));
    return hasErrors(diagnostics) ? undefined : config;
  };
  const clock = io.clock ?? systemClock;
  /** The API's host, named when a request gets no answer. */
  let apiHost: string | undefined;
  /** The run's context: the client the configuration asks for, one clock, the stop signal, the event sink. */
  const contextFor = (c: SyncConfig, events: EventSink) => {
    const ctx = openEngineContext(c, NEEDS_KEY, { clock, signal: stop, events });
    apiHost = hostOf(c.baseUrl);
    return ctx;
  };
  const planCommand = async (o: CommonOptions & { detailedExitcode?: boolean }): Promise<number> => {
    const c = await config(o);
    if (!c) return 1;
    // While the workspace is read: a Retry-After pause or a slow answer is said at once, and a
    // line comes at least every 10 s while the reads go on.
    const reading = withPrintableEvents(createReadProgress({ stream: io.stderr, clock, signal: stop }));
    const ctx = contextFor(c, reading);
    reading.start(() => ctx.client.stats());
    try {
      const result = await reconcile({ config: c, mode: 'plan' }, ctx);
      reading.finish();
      if (result.diagnostics.length)
        writeLine(io.stderr, renderDiagnostics(result.diagnostics, { color: colorErr, source: manifestText(c.dir) }));
      const shown = renderRunPlan(result, o.output, { color: colorOut });
      if (shown !== '') writeLine(io.stdout, shown);
      return exitCodeOf(result.run, o.detailedExitcode ? { detailedExitcode: true } : {});
    } finally {
      reading.finish();
      await ctx.close();
    }
  };

  const applyCommand = async (
    o: CommonOptions & { dryRun?: boolean; planLog?: string; autoApprove?: boolean },
  ): Promise<number> => {
    const c = await config(o);
    if (!c) return 1;
    const json = o.output === 'json';
    const made: { client?: ApiClient } = {};
    const progress = withPrintableEvents(
      createApplyProgress({
        stream: io.stderr,
        tty: Boolean(io.stderr.isTTY),
        clock,
        signal: stop,
        // The rate the client has learned from the server (below the configured one after 429s).
        ratePerMinute: () => made.client?.stats().currentPerMinute,
        bulkKinds: new Set(KIND_HANDLERS.filter((h) => h.applyBatch !== undefined).map((h) => h.kind)),
      }),
    );
    const ctx = contextFor(c, progress);
    made.client = ctx.client;
    progress.reading.start(() => ctx.client.stats());
    const logFile = o.planLog
      ? resolve(io.cwd, o.planLog)
      : join(io.cwd, '.cortex-sync', `plan-log-${new Date(clock.now()).toISOString().replace(/[:.]/g, '-')}.jsonl`);
    let fileLog: FilePlanLog | undefined;
    let planLog: PlanLogSink | undefined;
    let shownFirst = false;
    /** The plan and its diagnostics are shown once, before anything is written; on a terminal, only `yes` goes on. */
    const approve = async (plan: Plan, diagnostics: readonly Diagnostic[], work: PlanWork): Promise<boolean> => {
      progress.reading.finish();
      const result: ReconcileResult = { status: 'planned', plan, diagnostics: [...diagnostics] };
      if (!json) {
        if (diagnostics.length)
          writeLine(io.stderr, renderDiagnostics(diagnostics, { color: colorErr, source: manifestText(c.dir) }));
        writeLine(io.stdout, renderRunPlan(result, o.output, { color: colorOut }));
        shownFirst = true;
      }
      if (!work.hasWork) return true;
      if (!o.autoApprove && canAsk(io) && !(await askToApply(io, stop))) return false;
      progress.start(pendingByKind(work));
      return true;
    };
    try {
      fileLog = o.dryRun ? undefined : openPlanLog(logFile);
      planLog = fileLog ? redactingPlanLog(fileLog, redaction.redact) : undefined;
      const mode = o.dryRun ? 'plan' : 'apply';
      const result = await reconcile({ config: c, mode, approve, ...(planLog ? { planLog } : {}) }, ctx);
      progress.finish();
      // Closed before the report: the report names the plan log only when one was kept.
      await planLog?.close();
      const keptLog = fileLog?.kept() ? logFile : undefined;
      if (result.diagnostics.length && !shownFirst)
        writeLine(io.stderr, renderDiagnostics(result.diagnostics, { color: colorErr, source: manifestText(c.dir) }));
      const run = result.run;
      // Only the person at the terminal says no to an apply here.
      const declined = run.outcome === 'not-approved';
      const exitCode = exitCodeOf(run, { stoppedBy: stoppedBy(stop) });
      const report =
        result.status === 'applied' ? { ...result.report, ...(keptLog ? { planLogFile: keptLog } : {}) } : undefined;
      if (json) {
        writeLine(
          io.stdout,
          renderApplyJson(result, {
            ...(declined ? { status: 'declined' as const } : {}),
            ...(report ? { report } : {}),
            summaryLine: run.summaryLine,
            exitCode,
          }),
        );
      } else if (!shownFirst) {
        const shown = renderRunPlan(result, o.output, { color: colorOut });
        if (shown !== '') writeLine(io.stdout, shown);
      }
      if (declined) {
        const leaseKey = c.sourceId ? `inventory/${leaseTag(c.sourceId)}` : undefined;
        const writes = fileLog?.writesByObject() ?? new Map<string, number>();
        writeLine(
          io.stderr,
          cancelledLine({
            writes,
            ...(leaseKey ? { leaseKey } : {}),
            ...(keptLog ? { planLogFile: keptLog } : {}),
          }),
        );
      }
      // The text plan says it was refused; the other formats get the sentence on stderr.
      if (run.outcome === 'refused' && o.output !== 'text' && o.output !== undefined)
        writeLine(io.stderr, 'Nothing was applied: the plan has errors (see above).');
      if (!report || json) return exitCode;
      writeLine(
        io.stdout,
        renderApplyReport(report, {
          color: colorOut,
          summaryLine: run.summaryLine,
          outcome: run.outcome,
          runWrites: run.requests.writes,
        }),
      );
      return exitCode;
    } finally {
      progress.finish();
      await planLog?.close();
      await ctx.close();
    }
  };

  const program = new Command('cortex-sync')
    .description('Declarative GitOps sync of a Cortex workspace from YAML manifests')
    .version(VERSION)
    .option('--debug', 'print stack traces of errors')
    .addHelpText('after', ENVIRONMENT_HELP)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  const dirOption = () => new Option('--dir <dir>', 'manifest root (default: the current directory)');
  const sharedSyncOptions = (cmd: Command) =>
    cmd
      .addOption(dirOption())
      .option('--prune', 'remove objects this repository manages whose manifests are gone')
      .option('--no-prune', 'never prune in this run, whatever cortex-sync.yaml or CORTEX_SYNC_PRUNE says')
      .option('--allow-mass-delete', 'allow a prune above the configured share or count of managed objects')
      .option('--allow-takeover', 'take over objects another source id manages')
      .option('--source-id <id>', 'identifies this repository in the ownership records')
      .option('--base-url <url>', 'API base address (env CORTEX_BASE_URL)');

  program
    .command('validate')
    .description('offline: parse and check every manifest and the references between them')
    .addOption(dirOption())
    .addOption(new Option('--output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: CommonOptions) => {
      if (await rootMissing(o)) {
        exitCode = 1;
        return;
      }
      const { config: c, diagnostics: configDiagnostics } = await configureRun({ said: settingsOf(o) }, io.env, io.cwd);
      const result = await validateManifests(c.dir, { signal: stop });
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
          writeLine(io.stderr, renderDiagnostics(diagnostics, { color: colorErr, source: manifestText(c.dir) }));
        writeLine(
          failed ? io.stderr : io.stdout,
          failed
            ? `${countOf(diagnostics.filter((d) => d.severity === 'error').length, 'error')} in ${countOf(result.files.length, 'file')}.`
            : `OK: ${countOf(result.objects.length, 'object')} in ${countOf(result.files.length, 'file')}.`,
        );
      }
      exitCode = failed ? 1 : 0;
    });

  sharedSyncOptions(
    program
      .command('plan')
      .description('read the live workspace and print what apply would do (GET requests only)')
      .addOption(new Option('--output <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
      .option('--detailed-exitcode', 'exit 2 when there are changes to apply'),
  ).action(async (o: CommonOptions & { detailedExitcode?: boolean }) => {
    exitCode = await planCommand(o);
  });

  sharedSyncOptions(
    program
      .command('apply')
      .description('plan, then apply the changes in dependency order')
      .option('--dry-run', 'only plan (sends GET requests only)')
      .option('--auto-approve', 'apply without asking for confirmation (asked only on a terminal)')
      .option('--plan-log <file>', 'JSON Lines log of every API operation (default .cortex-sync/plan-log-<time>.jsonl)')
      .option('--concurrency <n>', 'changes applied at once (1–64)', concurrency)
      .option('--force-entity-type-schema', 'allow entity type schema changes that break existing entities')
      .option(
        '--break-lease',
        "take this source's apply lease even if another apply holds it (prints whose lease it broke; that apply stops starting changes)",
      )
      .addOption(
        new Option('--output <format>', 'plan output format').choices(['text', 'json', 'markdown']).default('text'),
      ),
  ).action(async (o: CommonOptions & { dryRun?: boolean; planLog?: string; autoApprove?: boolean }) => {
    exitCode = await applyCommand(o);
  });

  program
    .command('emulator')
    .description('start the built-in API emulator on loopback and print its base URL')
    .option('--port <n>', 'port (0 = any free port)', port, 0)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--data <file>', 'load state from and save it to this JSON file')
    .option('--rate-limit <n>', 'requests per minute before 429 (default 1000; 0 = no limit)', nonNegativeInt)
    .addOption(
      new Option(
        '--missing-definition <mode>',
        "a custom-type entity without x-cortex-definition: accept it only when its type's schema is {} (empty-schema), always refuse it ('Definition is required'), or allow it whenever its type's schema accepts {}",
      )
        .choices(MISSING_DEFINITION_MODES)
        .default('empty-schema'),
    )
    .action(async (o: EmulatorFlags) => {
      const emulator = await runEmulatorCommand(
        {
          port: o.port,
          host: o.host,
          ...(o.data ? { dataFile: resolve(io.cwd, o.data) } : {}),
          ...(o.rateLimit !== undefined ? { rateLimitPerMinute: o.rateLimit } : {}),
          missingDefinition: o.missingDefinition,
        },
        { stdout: io.stdout, stderr: io.stderr, env: io.env },
      );
      await (io.untilStopped?.() ?? new Promise<void>(() => {}));
      await emulator.stop();
    });

  registerExportCommand(program, io, (code) => {
    exitCode = code;
  });

  registerWatchCommand(program, io, (code) => {
    exitCode = code;
  });

  registerWebhookRouteCommand(program, io, (code) => {
    exitCode = code;
  });

  try {
    await program.parseAsync([...argv], { from: 'user' });
    debug = Boolean(program.opts().debug) || debug;
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    if (error instanceof InterruptedError) {
      writeLine(io.stderr, `${stoppedBy(stop)}: ${printable(error.message)}.`);
      return signalExitCode(stoppedBy(stop));
    }
    const said = printable(error instanceof Error ? error.message : String(error));
    const message =
      error instanceof ApiError && error.status === undefined && apiHost !== undefined
        ? `error: ${said}; ${printable(unreachableHint(error, apiHost))}`
        : error instanceof CortexSyncError
          ? `error: ${said}`
          : `internal error: ${said}${debug ? '' : ' (run with --debug for details)'}`;
    writeLine(io.stderr, message);
    if (debug && error instanceof Error && error.stack) writeLine(io.stderr, error.stack);
    return 1;
  }
};
