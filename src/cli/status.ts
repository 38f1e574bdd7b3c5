/**
 * `cortex-sync status`: for a source, what its ownership record lists (counts per kind; `--objects`
 * the list), the origin its id is bound to, who holds its lease and since when, the last apply
 * recorded (`engine/status.ts`). Read-only: GET requests only. Every value read from the workspace
 * is escaped when printed as text (JSON escapes by itself).
 */
import { type Command, Option } from 'commander';
import { printable } from '../core/printable.js';
import { openEngineContext } from '../engine/api-client.js';
import { NO_EVENTS } from '../engine/context.js';
import { readSourceStatus, type StatusRead } from '../engine/status.js';
import { kindsFor } from '../kinds/registry.js';
import { OWNERSHIP_STORE } from '../kinds/ownership.js';
import { hostOf, writeLine } from '../runtime-io/io.js';
import { type CommonOptions, configFor } from './run-common.js';
import type { CliSession } from './session.js';

type StatusOptions = Pick<CommonOptions, 'dir' | 'sourceId' | 'baseUrl'> & {
  output: 'text' | 'json';
  objects?: boolean;
};

export const defineStatus = (command: Command, session: CliSession): void => {
  command
    .option('--dir <dir>', 'manifest root whose source to show (default: the current directory)')
    .option('--source-id <id>', 'the source to show (default: the one plan and apply use)')
    .option('--base-url <url>', 'API base address (env CORTEX_BASE_URL)')
    .addOption(new Option('--output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--objects', 'list every object the record holds')
    .action(async (o: StatusOptions) => session.exit(await runStatus(o, session)));
};

const textOf = (read: StatusRead): string => {
  const { status } = read;
  const lines = [`source: ${printable(status.sourceId)}`];
  if (!read.recorded) {
    lines.push('no ownership record in this workspace: nothing was applied from this source yet (or its id differs)');
  } else {
    const kinds = Object.entries(status.objects);
    const total = kinds.reduce((sum, [, count]) => sum + count, 0);
    lines.push(`origin: ${status.origin !== null ? printable(status.origin) : 'none recorded'}`);
    lines.push(`objects: ${total}`);
    for (const [kind, count] of kinds) lines.push(`  ${printable(kind).padEnd(20)} ${count}`);
  }
  const lease = read.leaseUnreadable
    ? 'an unreadable record (edited by hand?)'
    : status.lease === null
      ? 'free'
      : `held by ${printable(status.lease.holder)}${status.lease.since ? ` since ${status.lease.since}` : ''}${read.leaseIdle ? ' (idle: kept between its runs)' : ''}`;
  lines.push(`lease: ${lease}`);
  lines.push(`last apply: ${status.lastApply ? status.lastApply.at : 'none recorded'}`);
  for (const o of status.list ?? [])
    lines.push(`  ${printable(`${o.kind}/${o.id}`)}${o.file !== undefined ? `  (${printable(o.file)})` : ''}`);
  return lines.join('\n');
};

export const runStatus = async (o: StatusOptions, session: CliSession): Promise<number> => {
  const { io } = session;
  const c = await configFor(o, session);
  if (!c) return 1;
  if (c.sourceId === undefined || c.sourceId === '') {
    writeLine(
      io.stderr,
      'error: no source id: give --source-id (or CORTEX_SYNC_SOURCE_ID, or sourceId in cortex-sync.yaml)',
    );
    return 1;
  }
  const ctx = openEngineContext(c, "status reads the source's records in the workspace", {
    clock: session.clock,
    signal: session.stop,
    events: NO_EVENTS,
  });
  session.apiHost = hostOf(c.baseUrl);
  try {
    const read = await readSourceStatus(ctx.client, {
      sourceId: c.sourceId,
      handlers: kindsFor(c),
      store: OWNERSHIP_STORE,
      objects: o.objects === true,
    });
    writeLine(io.stdout, o.output === 'json' ? JSON.stringify(read.status, null, 2) : textOf(read));
    return 0;
  } finally {
    await ctx.close();
  }
};
