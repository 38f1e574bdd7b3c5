/**
 * jq programs evaluated with real jq (jq 1.8 compiled to WebAssembly, the `jq-wasm` package), in a
 * worker thread so that a program that never ends, or that fills memory, is stopped without
 * taking the process down: each evaluation has a time limit, after which the worker is terminated
 * and a fresh one started for the next program. Output is capped too. Used by the emulator's
 * inbound webhook and by the offline `webhook-route` command, so both give the same answer.
 */
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { Worker } from 'node:worker_threads';

/** What one evaluation gave: every output value, or why there is none. */
export type JqOutcome =
  | { ok: true; outputs: unknown[] }
  | {
      ok: false;
      /** `compile`: not a jq program; `error`: jq stopped with an error; `timeout`, `too-large`, `crashed`: limits. */
      reason: 'compile' | 'error' | 'timeout' | 'too-large' | 'crashed' | 'busy';
      message: string;
    };

interface JqEvaluatorOptions {
  /** Time one evaluation may take once it runs (default 2000 ms). */
  timeoutMs?: number;
  /** Largest output accepted, in bytes of JSON text (default 1 MiB). */
  maxOutputBytes?: number;
  /**
   * Evaluations that may wait behind the running one (default 16); one more is answered at once
   * with `busy` (the webhook's 503), so a flood of deliveries cannot queue without bound.
   */
  maxQueued?: number;
}

/** Runs jq programs one at a time on one worker; `close()` ends the worker. */
export interface JqEvaluator {
  /** Evaluates `program` on the JSON text `input` (one JSON value). Never rejects. */
  evaluate(program: string, input: string): Promise<JqOutcome>;
  close(): Promise<void>;
}

/** Resolves packages from this module's place (a name of its own: a bundle may declare `require`). */
const resolveHere = nodeModule.createRequire(import.meta.url);

/** The worker's code (CommonJS, run with `eval`): loads jq from the module the parent compiled once. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { loadJq } = require(workerData.entry);
loadJq({ wasmModule: workerData.module }).then((jq) => {
  parentPort.on('message', ({ id, program, input, maxOutputBytes }) => {
    let result;
    try {
      const r = jq.raw(input, program, ['-c']);
      if (r.exitCode !== 0 && r.stderr !== '') result = { id, kind: r.exitCode === 3 ? 'compile' : 'error', message: r.stderr };
      else if (r.stdout.length > maxOutputBytes) result = { id, kind: 'too-large', message: '' };
      else result = { id, kind: 'ok', stdout: r.stdout };
    } catch (e) {
      result = { id, kind: 'crashed', message: String(e && e.message ? e.message : e) };
    }
    parentPort.postMessage(result);
  });
  parentPort.postMessage({ ready: true });
}, (e) => parentPort.postMessage({ ready: false, message: String(e) }));
`;

/** A compiled WebAssembly module (structured-cloneable to a worker). */
type WasmModule = object;
/** Node's WebAssembly global (the project's type libraries do not declare it). */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } })
  .WebAssembly;

let compiled: Promise<WasmModule> | undefined;
/** jq's WebAssembly module, compiled once per process and shared with every worker. */
const jqModule = (): Promise<WasmModule> =>
  (compiled ??= wasm.compile(readFileSync(resolveHere.resolve('jq-wasm/jq.wasm'))));

type WorkerReply =
  | { ready: true }
  | { ready: false; message: string }
  | { id: number; kind: 'ok'; stdout: string }
  | { id: number; kind: 'compile' | 'error' | 'too-large' | 'crashed'; message: string };

/** jq's message without its `jq: error (at /dev/stdin:0): ` prefix and trailing noise. */
const cleanMessage = (stderr: string): string =>
  stderr
    .split('\n')
    .map((line) => line.replace(/^jq: error(?: \(at [^)]*\))?: /, ''))
    .filter((line) => line.trim() !== '' && !/^jq: \d+ compile errors?$/.test(line))
    .join('; ')
    .trim() || 'jq failed';

/** Parses `jq -c` output: one JSON value per line. */
const parseOutputs = (stdout: string): unknown[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);

/** A worker with jq loaded, once it says it is ready. */
const startWorker = async (): Promise<Worker> => {
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { entry: resolveHere.resolve('jq-wasm'), module: await jqModule() },
    // jq's own heap is WebAssembly memory (bounded by the module); this bounds the JS side (its output).
    resourceLimits: { maxOldGenerationSizeMb: 256 },
    // Emscripten prints `Aborted()` when jq runs out of memory: that is reported, not printed.
    stdout: true,
    stderr: true,
  });
  w.stdout.resume();
  w.stderr.resume();
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: WorkerReply) => {
      w.off('error', reject);
      if ('ready' in m && m.ready) resolve();
      else reject(new Error(`jq did not start: ${'message' in m ? m.message : 'unknown'}`));
    };
    w.once('message', onMessage);
    w.once('error', reject);
  });
  return w;
};

/** `message`'s answer from worker `w`, or why none came (`timeout`, `exited`). */
const ask = (
  w: Worker,
  message: { id: number; program: string; input: string; maxOutputBytes: number },
  timeoutMs: number,
): Promise<WorkerReply | 'timeout' | 'exited'> => {
  const { id } = message;
  return new Promise<WorkerReply | 'timeout' | 'exited'>((resolve) => {
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    const onMessage = (m: WorkerReply) => {
      if ('id' in m && m.id === id) finish(m);
    };
    const onExit = () => finish('exited');
    const finish = (r: WorkerReply | 'timeout' | 'exited') => {
      clearTimeout(timer);
      w.off('message', onMessage);
      w.off('exit', onExit);
      w.off('error', onExit);
      resolve(r);
    };
    w.on('message', onMessage);
    w.once('exit', onExit);
    w.once('error', onExit);
    w.postMessage(message);
  });
};

/** A jq evaluator with its own worker (started on first use). */
export const createJqEvaluator = (options: JqEvaluatorOptions = {}): JqEvaluator => {
  const timeoutMs = options.timeoutMs ?? 2000;
  const maxOutputBytes = options.maxOutputBytes ?? 1024 * 1024;
  let worker: Promise<Worker> | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const maxQueued = options.maxQueued ?? 16;
  /** Evaluations asked for and not yet answered (the running one included). */
  let pending = 0;
  let nextId = 1;
  let closed = false;

  const discardWorker = async (): Promise<void> => {
    const w = worker;
    worker = undefined;
    if (w) await (await w.catch(() => undefined))?.terminate();
  };

  const run = async (program: string, input: string): Promise<JqOutcome> => {
    if (closed) return { ok: false, reason: 'crashed', message: 'the jq evaluator is closed' };
    let w: Worker;
    try {
      w = await (worker ??= startWorker());
    } catch (error) {
      worker = undefined;
      return { ok: false, reason: 'crashed', message: error instanceof Error ? error.message : String(error) };
    }
    const id = nextId++;
    // Held only while it works: an idle worker never keeps the process alive.
    w.ref();
    const reply = await ask(w, { id, program, input, maxOutputBytes }, timeoutMs);
    w.unref();
    if (reply === 'timeout') {
      await discardWorker();
      return { ok: false, reason: 'timeout', message: `the jq program did not finish within ${timeoutMs} ms` };
    }
    if (reply === 'exited') {
      await discardWorker();
      return { ok: false, reason: 'crashed', message: 'jq stopped (out of memory?)' };
    }
    if (!('kind' in reply)) return { ok: false, reason: 'crashed', message: 'unexpected answer from jq' };
    switch (reply.kind) {
      case 'ok':
        try {
          return { ok: true, outputs: parseOutputs(reply.stdout) };
        } catch {
          return { ok: false, reason: 'error', message: 'jq printed something that is not JSON' };
        }
      case 'too-large':
        return { ok: false, reason: 'too-large', message: `the jq program's output exceeds ${maxOutputBytes} bytes` };
      case 'crashed':
        // After an abort (memory exhausted) the WebAssembly instance is unusable: start afresh next time.
        await discardWorker();
        return { ok: false, reason: 'crashed', message: `jq stopped: ${reply.message}` };
      default:
        return { ok: false, reason: reply.kind, message: cleanMessage(reply.message) };
    }
  };

  return {
    evaluate(program, input) {
      if (pending > maxQueued) {
        return Promise.resolve({
          ok: false,
          reason: 'busy',
          message: `${pending} jq evaluations are running or waiting already`,
        } satisfies JqOutcome);
      }
      pending += 1;
      const result = queue
        .then(() => run(program, input))
        .finally(() => {
          pending -= 1;
        });
      queue = result.catch(() => undefined);
      return result;
    },
    async close() {
      closed = true;
      await queue;
      await discardWorker();
    },
  };
};

/**
 * Why `program` cannot be wrapped as one term, or undefined when it can: its brackets outside
 * strings and comments close one that it did not open, or stay open. A program that closes more
 * than it opens could close a wrapper it is concatenated into (`if false then (P) else empty end`)
 * and run the rest at once. Strings are followed with their escapes and `\(…)` interpolations (code
 * again, brackets counted); a comment runs to the end of its line (a backslash before the line end
 * continues it, as in jq 1.8).
 */
export const unbalancedJq = (program: string): string | undefined => {
  const CLOSER: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
  // Open brackets; `"` marks an interpolation's return into a string.
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < program.length; i++) {
    const ch = program[i] as string;
    if (inString) {
      if (ch === '\\') {
        if (program[i + 1] === '(') {
          stack.push('"', '(');
          inString = false;
        }
        i += 1;
      } else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '#') {
      while (i < program.length && program[i] !== '\n') i += program[i] === '\\' ? 2 : 1;
    } else if (ch in CLOSER) stack.push(ch);
    else if (ch === ')' || ch === ']' || ch === '}') {
      const open = stack.pop();
      if (open === undefined || CLOSER[open] !== ch) return `\`${ch}\` at offset ${i} closes nothing it opened`;
      if (stack.at(-1) === '"') {
        stack.pop();
        inString = true;
      }
    }
  }
  if (inString) return 'a string is not closed';
  return stack.length > 0 ? `\`${stack.at(-1) ?? ''}\` is not closed` : undefined;
};
