/**
 * Repositories for the benchmark of one watcher of many sources (`watch-sources.ts`): each
 * source a generated repository (`generate.ts`) cut down to the kinds that many sources can hold
 * side by side — teams, domains, services and their dependency edges, every tag prefixed with
 * the source's name — under a source id of its own. What only one source of a workspace can
 * declare (entity types, catalog pages, Initiatives, Scaffolder templates) and the entities of
 * the custom type are left out.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { repositoryFiles, shapeOf } from './generate.js';

/** The generated files a source keeps: entities of the built-in types and the dependency edges. */
const KEPT = /^\.cortex\/(teams|domains|dependencies)\/|^\.cortex\/catalog\/svc-/;

/** The size to ask `generate.ts` for, so that teams + domains + services come to `entities`. */
const generatedSize = (entities: number): number => {
  for (let n = entities; n < entities * 2; n += 1) {
    const shape = shapeOf(n);
    if (shape.teams + shape.domains + shape.services === entities) return n;
  }
  throw new RangeError(`no generated repository has exactly ${entities} built-in entities`);
};

/** `team-00001` → `s03-team-00001`: every tag of the repository, wherever it is named. */
const prefixed = (text: string, prefix: string): string =>
  text.replace(/\b(team|domain|svc)-(\d{5})\b/g, `${prefix}$1-$2`);

/**
 * Writes a source's repository into `dir`: `entities` entities (teams, domains, services) whose
 * tags start with `prefix`, source id `sourceId`; `revision` changes every entity's description.
 */
export const writeSourceRepository = async (
  dir: string,
  options: { entities: number; prefix: string; sourceId: string; revision?: number },
): Promise<{ entities: number; files: number }> => {
  const { files } = repositoryFiles({
    entities: generatedSize(options.entities),
    ...(options.revision !== undefined ? { revision: options.revision } : {}),
  });
  const kept = [...files].filter(([path]) => KEPT.test(path));
  const out = new Map<string, string>(
    kept.map(([path, text]) => [prefixed(path, options.prefix), prefixed(text, options.prefix)]),
  );
  out.set('cortex-sync.yaml', `sourceId: ${options.sourceId}\n`);
  for (const d of new Set([...out.keys()].map((p) => dirname(join(dir, p))))) await mkdir(d, { recursive: true });
  const entries = [...out];
  for (let i = 0; i < entries.length; i += 256)
    await Promise.all(entries.slice(i, i + 256).map(([path, text]) => writeFile(join(dir, path), text)));
  return { entities: options.entities, files: out.size };
};

/** A source of one service (`prefix` + `svc-00000`), source id `sourceId`. */
export const writeOneServiceRepository = async (dir: string, prefix: string, sourceId: string): Promise<void> => {
  const file = serviceFile(dir, prefix, 0);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(join(dir, 'cortex-sync.yaml'), `sourceId: ${sourceId}\n`);
  await writeFile(
    file,
    `openapi: 3.0.1\ninfo:\n  title: Service 0\n  x-cortex-tag: ${prefix}svc-00000\n  x-cortex-type: service\n`,
  );
};

/** The file of service `i` of a source written by `writeSourceRepository`. */
export const serviceFile = (dir: string, prefix: string, i: number): string =>
  join(dir, '.cortex', 'catalog', `${prefix}svc-${String(i).padStart(5, '0')}.yaml`);
