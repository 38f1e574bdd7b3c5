/**
 * A benchmark child: one `cortex-sync export` in a fresh process (the command as users run it,
 * in-process through `runCli`), printing one JSON line: wall and CPU time of the command, its exit
 * code, the files it wrote and the process's resource figures.
 *
 * Usage: `node export-child.js --out DIR --source-id ID [--kinds K,K]`; CORTEX_BASE_URL,
 * CORTEX_API_KEY (and CORTEX_RATE_LIMIT to change the client's budget) from the environment.
 */
import { readdir } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { runCli } from '../../../src/cli/main.js';
import { option, processFigures, report, timed } from './child-common.js';

const out = option('--out');
const sourceId = option('--source-id');
if (!out || !sourceId) throw new Error('--out and --source-id are required');
const kinds = option('--kinds');

const collect = (): { stream: PassThrough; text: () => string } => {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
};
const stdout = collect();
const stderr = collect();
const args = ['export', '--out', out, '--source-id', sourceId, ...(kinds ? ['--kinds', kinds] : [])];
const run = await timed(() =>
  runCli(args, { stdout: stdout.stream, stderr: stderr.stream, env: process.env, cwd: process.cwd() }),
);
const files = (await readdir(out, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;
report({
  mode: 'export',
  wallMs: run.wallMs,
  cpuMs: run.cpuMs,
  code: run.value,
  files,
  stdout: stdout.text().trim(),
  stderr: stderr.text().trim().slice(-2000),
  ...processFigures(),
});
