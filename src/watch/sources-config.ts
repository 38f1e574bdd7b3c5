/**
 * `watch --config FILE`: the sources one watcher follows. The operator writes this file (a
 * ConfigMap, say), so it decides what a source's flags would: where the manifests come from, the
 * source id, how often to fetch, prune, and what drift does. What is one for the whole process
 * (the key, the API's address, its rate and concurrency, the port) is not a source's to say: the
 * settings table's entries other than `sourceId` and `prune` are refused here, each naming the
 * flag or variable that sets it. A source's repository still proposes its own `cortex-sync.yaml`,
 * read with the file's rules at every run. Strict: every other key, a bad value, two sources with
 * one name, one source id or one checkout are errors naming the file, the line and the field.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { Diagnostic, ParsedDocument } from '../core/model.js';
import type { AnySettingSpec } from '../core/settings.js';
import { SETTINGS } from '../engine/settings.js';
import { parseManifestFile } from '../source/yaml.js';
import { zodIssuesToDiagnostics } from '../source/zod-diagnostics.js';
import { DurationError, parseDuration } from './duration.js';
import { formatDiagnostic } from './run-record.js';

export const DRIFT_ACTIONS = ['heal', 'pr', 'report'] as const;
export type DriftAction = (typeof DRIFT_ACTIONS)[number];

/** One source as the file says it, checked. */
export interface SourceEntry {
  name: string;
  repo?: string;
  dir?: string;
  branch?: string;
  path?: string;
  sourceId?: string;
  /** How often its branch is fetched (default: `--interval`). */
  intervalMs?: number;
  prune?: boolean;
  onDrift?: DriftAction;
  /** Where the entry starts in the file, for messages. */
  line: number;
}

/** The settings a source entry may say, by the table's own schema. */
const PER_SOURCE = ['sourceId', 'prune'] as const;

const specOf = (key: string): AnySettingSpec => {
  const spec = SETTINGS.find((s) => s.key === key);
  if (!spec) throw new Error(`no setting ${key}`);
  return spec;
};

const durationText = z.union([z.string(), z.literal(0)]).transform((value, ctx) => {
  try {
    return parseDuration(String(value));
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof DurationError ? error.message : String(error) });
    return z.NEVER;
  }
});

/** Used as a metric label, a log field and a key of `/status`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const ENTRY_KEYS = {
  name: z
    .string()
    .regex(NAME, 'a name of letters, digits, `.`, `_` or `-` (at most 63), starting with a letter or digit'),
  repo: z.string().min(1).optional(),
  dir: z.string().min(1).optional(),
  branch: z.string().min(1).max(255).optional(),
  path: z.string().min(1).max(1024).optional(),
  sourceId: (specOf('sourceId').value.schema as z.ZodType<string>).optional(),
  interval: durationText.optional(),
  prune: (specOf('prune').value.schema as z.ZodType<boolean>).optional(),
  onDrift: z.enum(DRIFT_ACTIONS).optional(),
};

const entrySchema = z.strictObject(ENTRY_KEYS).superRefine((entry, ctx) => {
  if (Boolean(entry.repo) === Boolean(entry.dir))
    ctx.addIssue({ code: 'custom', message: 'give exactly one of `repo` or `dir`', path: ['repo'] });
  if (entry.dir && (entry.branch || entry.path))
    ctx.addIssue({
      code: 'custom',
      message: '`branch` and `path` belong to a `repo` source',
      path: [entry.branch ? 'branch' : 'path'],
    });
});

const fileSchema = z.strictObject({ sources: z.array(entrySchema).min(1, 'list at least one source') });

/** The settings table's entries a source may not say, with where the operator says them instead. */
const processWide = (): ReadonlyMap<string, string> =>
  new Map(
    SETTINGS.filter((spec) => !(PER_SOURCE as readonly string[]).includes(spec.key) && !(spec.key in ENTRY_KEYS)).map(
      (spec) => {
        const ways = [spec.flag, spec.env].filter(Boolean).join(' or ');
        return [
          spec.key,
          ways ? `the operator sets it for every source (${ways})` : 'the operator sets it for every source',
        ];
      },
    ),
  );

const error = (file: string, message: string, at: { line: number; column: number }, field?: string): Diagnostic => ({
  severity: 'error',
  code: 'config',
  message,
  file,
  line: at.line,
  column: at.column,
  ...(field !== undefined ? { field } : {}),
});

/** Keys of the table a source entry names though they are not a source's to say. */
const refusedKeys = (doc: ParsedDocument, file: string): Diagnostic[] => {
  const sources = (doc.value as { sources?: unknown }).sources;
  if (!Array.isArray(sources)) return [];
  const wide = processWide();
  return (sources as unknown[]).flatMap((entry, i) =>
    typeof entry === 'object' && entry !== null
      ? Object.keys(entry).flatMap((key) => {
          const why = wide.get(key);
          return why === undefined
            ? []
            : [
                error(
                  file,
                  `sources[${i}].${key} is not set per source: ${why}`,
                  doc.locate(['sources', i, key]),
                  `sources[${i}].${key}`,
                ),
              ];
        })
      : [],
  );
};

/** The file's value without the keys `refusedKeys` reported (each is said once). */
const withoutRefused = (value: object): unknown => {
  const sources = (value as { sources?: unknown }).sources;
  if (!Array.isArray(sources)) return value;
  const wide = processWide();
  return {
    ...value,
    sources: sources.map((entry: unknown) =>
      typeof entry === 'object' && entry !== null && !Array.isArray(entry)
        ? Object.fromEntries(Object.entries(entry).filter(([key]) => !wide.has(key)))
        : entry,
    ),
  };
};

/** Two sources with one name, one source id, or one checkout (repository, branch and path) or directory. */
const duplicates = (entries: readonly SourceEntry[], file: string, doc: ParsedDocument): Diagnostic[] => {
  const problems: Diagnostic[] = [];
  const seen = new Map<string, number>();
  entries.forEach((entry, i) => {
    const keys: [string, string, string][] = [
      [`name ${entry.name}`, 'name', `the name \`${entry.name}\``],
      ...(entry.sourceId
        ? [[`id ${entry.sourceId}`, 'sourceId', `the source id \`${entry.sourceId}\``] as [string, string, string]]
        : []),
      entry.repo
        ? [
            `repo ${entry.repo}#${entry.branch ?? ''}:${entry.path ?? ''}`,
            'repo',
            'the same repository, branch and path',
          ]
        : [`dir ${entry.dir ?? ''}`, 'dir', 'the same directory'],
    ];
    for (const [key, field, what] of keys) {
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else
        problems.push(
          error(
            file,
            `sources[${i}] has ${what} as sources[${first}] (line ${entries[first]?.line ?? '?'})`,
            doc.locate(['sources', i, field]),
            `sources[${i}].${field}`,
          ),
        );
    }
  });
  return problems;
};

/** The sources of `text` (the file `file`), or every problem with it. */
export const parseSourcesConfig = (
  file: string,
  text: string,
): { sources: SourceEntry[]; diagnostics: Diagnostic[] } => {
  const parsed = parseManifestFile(file, text);
  const doc = parsed.documents[0];
  const parseErrors = parsed.diagnostics.filter((d) => d.severity === 'error');
  if (!doc || parseErrors.length > 0)
    return {
      sources: [],
      diagnostics:
        parseErrors.length > 0
          ? parseErrors
          : [error(file, 'the file is empty: list the `sources:`', { line: 1, column: 1 })],
    };
  if (parsed.documents.length > 1)
    return {
      sources: [],
      diagnostics: [
        error(
          file,
          'one YAML document expected (remove the `---` separators)',
          parsed.documents[1] ?? { line: 1, column: 1 },
        ),
      ],
    };
  if (typeof doc.value !== 'object' || doc.value === null || Array.isArray(doc.value))
    return { sources: [], diagnostics: [error(file, 'expected a mapping with `sources:`', doc)] };
  const refused = refusedKeys(doc, file);
  const result = fileSchema.safeParse(withoutRefused(doc.value));
  if (!result.success)
    return { sources: [], diagnostics: [...refused, ...zodIssuesToDiagnostics(result.error.issues, doc, {})] };
  if (refused.length > 0) return { sources: [], diagnostics: refused };
  const sources = result.data.sources.map((entry, i): SourceEntry => {
    const { interval, ...rest } = entry;
    return {
      ...(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Omit<
        SourceEntry,
        'line' | 'intervalMs'
      >),
      ...(interval !== undefined ? { intervalMs: interval } : {}),
      line: doc.locate(['sources', i]).line,
    };
  });
  const problems = duplicates(sources, file, doc);
  return problems.length > 0 ? { sources: [], diagnostics: problems } : { sources, diagnostics: [] };
};

/** Reads `file`; every problem is one `ConfigError` listing them all, file and line first. */
export const readSourcesConfig = async (file: string, shownAs: string): Promise<SourceEntry[]> => {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new ConfigError(
      `--config ${shownAs}: cannot read it (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`,
    );
  }
  const { sources, diagnostics } = parseSourcesConfig(shownAs, text);
  if (diagnostics.length > 0) throw new ConfigError(diagnostics.map(formatDiagnostic).join('\n'));
  return sources;
};
