/**
 * The API key, the same way in every runtime (CLI, watcher, export; the Action passes its
 * `api-key` input as `CORTEX_API_KEY`): from `CORTEX_API_KEY`, or from the file
 * `CORTEX_API_KEY_FILE` names (a mounted Kubernetes or Docker secret). Setting both is an error
 * (no silent precedence between two keys).
 *
 * The file is the operator's, never the repository's: its path and what it resolves to must both be
 * **outside** the manifest root (a symlink is followed, as a mounted secret is one, but neither the
 * link nor its target may be in the repository), and it must be
 * a regular file (a FIFO, a device or a directory is refused without hanging), at most 64 KiB.
 * Surrounding whitespace (the trailing newline of `echo key > file`, a CRLF) is dropped; what is
 * left must be one non-empty token without whitespace or control characters. No message ever
 * quotes the file's content or the key.
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Diagnostic } from '../core/model.js';
import { isInsideFolder, readRegularFile } from '../source/regular-file.js';

const API_KEY_ENV = 'CORTEX_API_KEY';
const API_KEY_FILE_ENV = 'CORTEX_API_KEY_FILE';
const MAX_KEY_FILE_BYTES = 64 * 1024;

interface ApiKeyResolution {
  apiKey?: string;
  /** Where the key came from: `CORTEX_API_KEY` or `CORTEX_API_KEY_FILE`. */
  from?: typeof API_KEY_ENV | typeof API_KEY_FILE_ENV;
  /** Errors (code `config`) naming the variable; never the key or the file's content. */
  diagnostics: Diagnostic[];
}

const INSIDE_ROOT =
  'is inside the manifest directory, which the repository controls; keep the file outside it (a mounted secret)';

const problem = (message: string): Diagnostic => ({ severity: 'error', code: 'config', message });

/** What is wrong with a key value (already trimmed), or undefined. */
const keyProblem = (key: string, from: string): string | undefined => {
  if (key === '') return `${from} is empty`;
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(key))
    return `${from} holds whitespace, a line break or a control character inside the key (more than one line?); it must hold the secret alone`;
  return undefined;
};

const realOrResolved = (dir: string): string => {
  try {
    return realpathSync.native(dir);
  } catch {
    return resolve(dir);
  }
};

/** Where a secret file may not be, and what a relative path is relative to. */
interface SecretPlace {
  /** The folder the repository controls. */
  manifestRoot: string;
  /** What a relative `…_FILE` path is relative to. */
  cwd: string;
}

interface SecretResolution {
  value?: string;
  /** The variable it came from: `NAME` or `NAME_FILE`. */
  from?: string;
  /** Errors (code `config`) naming the variable; never the value or the file's content. */
  diagnostics: Diagnostic[];
}

/**
 * The API key from `env` (see the module comment); the key file must not be inside
 * `where.manifestRoot`. An unset key is not an error here: the commands that need one say so.
 */
export const resolveApiKey = (env: NodeJS.ProcessEnv, where: SecretPlace): ApiKeyResolution => {
  const { value, from, diagnostics } = resolveSecret(env, API_KEY_ENV, where);
  return {
    ...(value !== undefined ? { apiKey: value } : {}),
    ...(from === API_KEY_ENV || from === API_KEY_FILE_ENV ? { from } : {}),
    diagnostics,
  };
};

/**
 * Any secret of the operator's (the API key, the watcher's webhook secret and git token) under the
 * rules of the module comment: from the variable `name`, or from the file `${name}_FILE` names.
 */
export const resolveSecret = (env: NodeJS.ProcessEnv, name: string, where: SecretPlace): SecretResolution => {
  const fileName = `${name}_FILE`;
  const fromEnv = env[name];
  const file = env[fileName];
  const envSet = fromEnv !== undefined && fromEnv !== '';
  const fileSet = file !== undefined && file.trim() !== '';
  if (envSet && fileSet)
    return {
      diagnostics: [
        problem(`both ${name} and ${fileName} are set: set only one, so that it is clear which value is used`),
      ],
    };
  if (envSet) {
    const key = fromEnv.trim();
    const why = keyProblem(key, name);
    return why ? { diagnostics: [problem(why)] } : { value: key, from: name, diagnostics: [] };
  }
  if (!fileSet) return { diagnostics: [] };
  const named = `${fileName} (${file.trim()})`;
  const path = resolve(where.cwd, file.trim());
  const root = realOrResolved(where.manifestRoot);
  // The name itself must be outside too: a symlink inside the repository could point anywhere.
  if (isInsideFolder(root, join(realOrResolved(dirname(path)), basename(path))))
    return { diagnostics: [problem(`${named} ${INSIDE_ROOT}`)] };
  const read = readRegularFile(path, { maxBytes: MAX_KEY_FILE_BYTES, outside: root });
  if (!read.ok) {
    const reason =
      read.code === 'inside-root'
        ? INSIDE_ROOT
        : read.code === 'too-large'
          ? `is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB; it must hold the secret alone`
          : read.reason;
    return { diagnostics: [problem(`${named} ${reason}`)] };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(read.bytes);
  } catch {
    return { diagnostics: [problem(`${named} is not UTF-8 text; it must hold the secret alone`)] };
  }
  const key = text.trim();
  const why = keyProblem(key, named);
  return why ? { diagnostics: [problem(why)] } : { value: key, from: fileName, diagnostics: [] };
};

/**
 * Every form of the key the environment holds, for redaction before anything is printed: the
 * variable as it is and trimmed, and the key file's content trimmed when it is one key (read
 * under the same rules, without the place check: a key that will be refused for where its file
 * is is still never printed).
 */
export const keysToRedact = (env: NodeJS.ProcessEnv, cwd: string): string[] => {
  const keys = [env[API_KEY_ENV] ?? '', env[API_KEY_ENV]?.trim() ?? ''];
  const file = env[API_KEY_FILE_ENV]?.trim();
  if (file) {
    const read = readRegularFile(resolve(cwd, file), { maxBytes: MAX_KEY_FILE_BYTES });
    const key = read.ok ? read.bytes.toString('utf8').trim() : '';
    // Only a file that holds one key is ever used as one; anything else is refused, never sent.
    if (keyProblem(key, API_KEY_FILE_ENV) === undefined) keys.push(key);
  }
  return [...new Set(keys.filter((k) => k !== ''))];
};
