/**
 * The CLI's start, as a user runs it: `node bin/cortex-sync.js --help` (the bundle `npm run bench`
 * builds first) beside `node -e 0`, alternately in the same run so that both see the same load;
 * and `validate --dir examples`. Wall time from spawn to exit, medians.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { median } from './analysis.js';
import type { Figure } from './figures.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'cortex-sync.js');

export interface StartupResult {
  runs: number;
  /** Medians, ms. */
  nodeMs: number;
  helpMs: number;
  versionMs: number;
  validateMs: number;
  samples: { nodeMs: number; helpMs: number; versionMs: number; validateMs: number }[];
}

/** Wall time of one process from spawn to exit; fails on a non-zero exit. */
const wallOf = (args: readonly string[]): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code === 0) resolve(wallMs);
      else reject(new Error(`node ${args.join(' ')} exited ${code}`));
    });
  });

export const measureStartup = async (runs: number): Promise<StartupResult> => {
  const samples: StartupResult['samples'] = [];
  // One of each first, unmeasured: the files are in the page cache for every measured run.
  for (let i = 0; i <= runs; i++) {
    const sample = {
      nodeMs: await wallOf(['-e', '0']),
      helpMs: await wallOf([BIN, '--help']),
      versionMs: await wallOf([BIN, '--version']),
      validateMs: await wallOf([BIN, 'validate', '--dir', 'examples']),
    };
    if (i > 0) samples.push(sample);
  }
  return {
    runs,
    nodeMs: median(samples.map((s) => s.nodeMs)),
    helpMs: median(samples.map((s) => s.helpMs)),
    versionMs: median(samples.map((s) => s.versionMs)),
    validateMs: median(samples.map((s) => s.validateMs)),
    samples,
  };
};

export const startupFigures = (r: StartupResult): Figure[] => {
  const node = { value: r.nodeMs, what: '`node -e 0`' };
  return [
    {
      id: 'cli-help',
      figure: `\`cortex-sync --help\`, wall (median of ${r.runs})`,
      value: r.helpMs,
      unit: 'ms',
      floor: node,
      target: { timesFloor: 4 },
    },
    {
      id: 'cli-version',
      figure: `\`cortex-sync --version\`, wall (median of ${r.runs})`,
      value: r.versionMs,
      unit: 'ms',
      floor: node,
      target: { timesFloor: 4 },
    },
    {
      id: 'cli-validate-examples',
      figure: `\`cortex-sync validate --dir examples\`, wall (median of ${r.runs})`,
      value: r.validateMs,
      unit: 'ms',
      floor: node,
      target: { atMost: 400 },
    },
  ];
};
