/** Starts `emulator-child.ts` in its own Node process (bundled with esbuild, since Node runs no TypeScript). */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import type { EmulatorFaults } from '../../packages/emulator/src/faults.js';
import type { RequestLogEntry } from '../../packages/emulator/src/server.js';

export interface EmulatorProcess {
  url: string;
  requests(): Promise<RequestLogEntry[]>;
  stop(): Promise<void>;
}

export const startEmulatorProcess = async (options: {
  apiKey: string;
  faults: EmulatorFaults;
  outDir: string;
}): Promise<EmulatorProcess> => {
  const script = join(options.outDir, 'emulator-child.mjs');
  await build({
    entryPoints: [join(import.meta.dirname, 'emulator-child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: script,
    logLevel: 'error',
    // CommonJS dependencies bundled into ESM need a require.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  const child: ChildProcess = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH, CORTEX_API_KEY: options.apiKey, EMULATOR_FAULTS: JSON.stringify(options.faults) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`the emulator exited with code ${code} before it listened`)));
  });
  return {
    url,
    requests: async () => {
      const res = await fetch(`${url}/_emulator/requests`);
      return ((await res.json()) as { requests: RequestLogEntry[] }).requests;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
};
