/**
 * Whose directory is `--out`? `export` refuses to write into a directory that belongs to another
 * source id: one whose `cortex-sync.yaml` names another `sourceId` than the one given, or whose
 * manifests declare objects the workspace says another source manages. It also tells the writer
 * which objects the directory already declares, so they are not declared twice.
 */
import { ConfigError } from '../core/errors.js';
import type { LiveObject } from '../core/model.js';
import type { AnyKindHandler } from '../kinds/types.js';
import { loadManifests } from '../source/load.js';

interface OutDirInput {
  outDir: string;
  handlers: readonly AnyKindHandler[];
  /** The source id given by flag or environment, if any. */
  givenSourceId: string | undefined;
  /** `sourceId` of the directory's `cortex-sync.yaml`, if any. */
  fileSourceId: string | undefined;
  /** The source id export runs as (given, else the file's, else derived from git). */
  sourceId: string | undefined;
  live: readonly LiveObject[];
}

/** `kind/id` → the file (relative) that declares it, for every object the directory declares. */
type DeclaredObjects = Map<string, string>;

/** Refuses (a `ConfigError`) a directory whose `cortex-sync.yaml` names another source id than the one given. */
export const checkConfigSourceId = (input: Pick<OutDirInput, 'outDir' | 'givenSourceId' | 'fileSourceId'>): void => {
  const { givenSourceId, fileSourceId } = input;
  if (givenSourceId !== undefined && fileSourceId !== undefined && givenSourceId !== fileSourceId) {
    throw new ConfigError(
      `${input.outDir} belongs to source id \`${fileSourceId}\` (its cortex-sync.yaml says so), not \`${givenSourceId}\`: ` +
        'export into that repository with its own source id, or into another directory. Nothing was written',
    );
  }
};

/** Checks the directory (throws a `ConfigError` naming the reason) and returns what it declares. */
export const checkOutDir = async (input: OutDirInput): Promise<DeclaredObjects> => {
  checkConfigSourceId(input);
  // An empty (or new) output folder is the usual case here: nothing in it is not a mistake.
  const loaded = await loadManifests(input.outDir, input.handlers, { allowEmpty: true });
  const declared: DeclaredObjects = new Map();
  for (const obj of loaded.objects) {
    const key = `${obj.kind}/${obj.id}`;
    if (!declared.has(key)) declared.set(key, obj.source.file);
  }
  const owners = new Map(input.live.map((o) => [`${o.kind}/${o.id}`, o.owner]));
  for (const [key, file] of declared) {
    const owner = owners.get(key);
    if (owner === undefined || owner === input.sourceId) continue;
    throw new ConfigError(
      `${input.outDir} holds manifests of source id \`${owner}\` (${file} declares ${key}, which \`${owner}\` manages)` +
        `${input.sourceId ? `, not \`${input.sourceId}\`` : ''}: export into that repository with --source-id ${owner}, or into another directory. Nothing was written`,
    );
  }
  return declared;
};
