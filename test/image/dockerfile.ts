/**
 * Reads a Dockerfile as Docker's parser does (comment lines dropped, `\` continuations joined) and
 * checks its COPY/ADD sources against a build context filtered by `.dockerignore` with Docker's own
 * matching rules (`@balena/dockerignore`, a port of Docker's matcher: `!` re-includes, `**`, a
 * pattern naming a folder excluding what is under it).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import dockerignore from '@balena/dockerignore';

// The package is CommonJS whose types say `export default`: its export is the function itself,
// with a `default` property pointing to it.
const ignore = dockerignore.default;

export const REPO = join(import.meta.dirname, '..', '..');

export interface Instruction {
  /** 1-based line the instruction starts on. */
  line: number;
  keyword: string;
  args: string;
  /** The stage it belongs to (index of its FROM). */
  stage: number;
}

export const parseDockerfile = (text: string): Instruction[] => {
  const out: Instruction[] = [];
  let pending: { line: number; text: string } | undefined;
  let stage = -1;
  const finish = (): void => {
    if (!pending) return;
    const match = /^\s*(\S+)\s*(.*)$/s.exec(pending.text);
    if (match) {
      const keyword = (match[1] ?? '').toUpperCase();
      if (keyword === 'FROM') stage++;
      out.push({ line: pending.line, keyword, args: (match[2] ?? '').trim(), stage });
    }
    pending = undefined;
  };
  text.split(/\r?\n/).forEach((raw, index) => {
    if (/^\s*#/.test(raw) || (pending && raw.trim() === '')) return;
    if (!pending && raw.trim() === '') return;
    const continued = /\\\s*$/.test(raw);
    const body = continued ? raw.replace(/\\\s*$/, '') : raw;
    pending = pending
      ? { line: pending.line, text: `${pending.text} ${body.trim()}` }
      : { line: index + 1, text: body };
    if (!continued) finish();
  });
  finish();
  return out;
};

/** An exec-form (JSON array) argument list, or undefined for the shell form. */
export const execForm = (args: string): string[] | undefined => {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) return undefined;
  return parsed as string[];
};

export interface CopyFromContext {
  line: number;
  keyword: 'COPY' | 'ADD';
  sources: string[];
}

/** The COPY/ADD instructions that read the build context (not `--from=` another stage or image). */
export const contextCopies = (instructions: Instruction[]): CopyFromContext[] =>
  instructions.flatMap((i) => {
    if (i.keyword !== 'COPY' && i.keyword !== 'ADD') return [];
    let rest = i.args;
    const flags: string[] = [];
    for (let m = /^--(\S+)\s+/.exec(rest); m; m = /^--(\S+)\s+/.exec(rest)) {
      flags.push(m[1] ?? '');
      rest = rest.slice(m[0].length);
    }
    if (flags.some((f) => f.startsWith('from='))) return [];
    const words = execForm(rest) ?? rest.split(/\s+/);
    const sources = words
      .slice(0, -1)
      .filter((s) => !(i.keyword === 'ADD' && /^(https?|git):\/\/|^git@/.test(s)) && !s.startsWith('<<'));
    return [{ line: i.line, keyword: i.keyword, sources }];
  });

/** Go's filepath.Match for one path segment (`*`, `?`, `[…]`, `\` escapes) as a RegExp. */
const segmentPattern = (segment: string): RegExp => {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] ?? '';
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '\\') source += `\\${segment[++i] ?? '\\'}`;
    else if (c === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end < 0) throw new Error(`unterminated [ in ${segment}`);
      const body = segment.slice(i + 1, end).replace(/^\^/, '!');
      source += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
      i = end;
    } else source += c.replace(/[.+^${}()|]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
};

/** The context paths (files, `/`-separated, relative) a COPY source names: itself, or all under it. */
export const filesNamed = (source: string, files: readonly string[]): string[] => {
  const cleaned = source
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '')
    .replace(/(^|\/)\.(?=\/|$)/g, '');
  if (cleaned === '' || cleaned === '.') return [...files];
  const segments = cleaned.split('/').filter((s) => s !== '');
  const patterns = segments.map(segmentPattern);
  return files.filter((file) => {
    const parts = file.split('/');
    return parts.length >= patterns.length && patterns.every((p, k) => p.test(parts[k] ?? ''));
  });
};

/** Whether `.dockerignore` leaves `file` (`/`-separated, relative) in the build context. */
export const inContext = (dockerignore: string, file: string): boolean => !ignore().add(dockerignore).ignores(file);

export interface ContextProblem {
  line: number;
  source: string;
  why: string;
}

/**
 * Every COPY/ADD source of the build context names at least one file that `.dockerignore` leaves
 * in the context (as `docker build` requires: a source with nothing left fails the build).
 * `files` are the context's files, `/`-separated, relative to it.
 */
export const contextProblems = (
  dockerfile: string,
  dockerignore: string,
  files: readonly string[],
): ContextProblem[] => {
  const ignored = ignore().add(dockerignore);
  const problems: ContextProblem[] = [];
  for (const copy of contextCopies(parseDockerfile(dockerfile)))
    for (const source of copy.sources) {
      if (/\$/.test(source)) {
        problems.push({ line: copy.line, source, why: 'names a variable: not checked, so refused' });
        continue;
      }
      const named = filesNamed(source, files);
      if (named.length === 0) problems.push({ line: copy.line, source, why: 'no such file in the repository' });
      else if (named.every((f) => ignored.ignores(f)))
        problems.push({ line: copy.line, source, why: `excluded by .dockerignore (${named.length} file(s))` });
    }
  return problems;
};

/** The files a clean clone's build context holds: what git tracks, and untracked files not git-ignored. */
export const repositoryFiles = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: REPO,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((f) => f !== '');

export const readRepoFile = (path: string): string => readFileSync(join(REPO, path), 'utf8');
