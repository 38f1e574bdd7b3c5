/**
 * The real-world corpus round trip: every valid descriptor of the shared corpus (`test/support/corpus.ts`) is
 * created through the emulator, read back in bulk, and must compare equal to its manifest (it
 * would plan as noop). A second apply of the same manifests changes nothing.
 */
import { CORPUS_DIR, describeWithCorpus } from '../../../support/corpus.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { entityKind } from '../../../../src/kinds/entity/index.js';
import { BUILT_IN_ENTITY_TYPES } from '../../../../src/kinds/entity/schema.js';
import {
  applyContext,
  createEntityType,
  type DesiredEntity,
  fetchContext,
  type Harness,
  type LiveEntity,
  parseEntities,
  SOURCE_ID,
  startHarness,
  writeChange,
} from '../../../kinds/entity/helpers.js';

const CORPUS = CORPUS_DIR ?? '';

interface CorpusEntity {
  file: string;
  desired: DesiredEntity;
}

/** Valid manifests with a tag, first file per tag; custom types only with a definition (the API requires one). */
const loadCorpus = (): CorpusEntity[] => {
  const seen = new Set<string>();
  const out: CorpusEntity[] = [];
  for (const file of readdirSync(CORPUS).sort()) {
    if (file === 'INDEX.tsv') continue;
    const { objects, diagnostics } = parseEntities(readFileSync(join(CORPUS, file), 'utf8'), file);
    if (diagnostics.some((d) => d.severity === 'error')) continue;
    for (const desired of objects) {
      const type = entityKind.entityTypeOf?.(desired) ?? 'service';
      const custom = !BUILT_IN_ENTITY_TYPES.includes(type);
      if (custom && desired.spec.info['x-cortex-definition'] == null) continue;
      if (seen.has(desired.id)) continue;
      seen.add(desired.id);
      out.push({ file, desired });
    }
  }
  return out;
};

const corpus = CORPUS_DIR === undefined ? [] : loadCorpus();
const customTypes = [...new Set(corpus.map((c) => entityKind.entityTypeOf?.(c.desired) ?? 'service'))].filter(
  (t) => !BUILT_IN_ENTITY_TYPES.includes(t),
);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  for (const type of customTypes) await createEntityType(h.client, type);
});
afterAll(async () => {
  await h.stop();
});

const readAll = async (): Promise<Map<string, LiveEntity>> => {
  const desired = corpus.map((c) => c.desired);
  const live = await entityKind.live.fetch(fetchContext(h.client, desired, [...BUILT_IN_ENTITY_TYPES, ...customTypes]));
  return new Map(live.map((l) => [l.id, l]));
};

/** Files whose entity does not compare equal to its manifest, with the first difference. */
const outOfSync = (live: Map<string, LiveEntity>): string[] =>
  corpus.flatMap(({ file, desired }) => {
    const l = live.get(desired.id);
    if (!l) return [`${file}: not found live`];
    if (l.owner !== SOURCE_ID) return [`${file}: owner ${l.owner}`];
    const want = JSON.stringify(entityKind.manifest.canonical(desired));
    const got = JSON.stringify(entityKind.live.canonical(l));
    return want === got ? [] : [`${file}:\n  desired ${want}\n  live    ${got}`];
  });

describeWithCorpus('entity round trip over the corpus', () => {
  it('covers most of the corpus, all three built-in types and custom types', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(100);
    const types = new Set(corpus.map((c) => entityKind.entityTypeOf?.(c.desired)));
    for (const t of [...BUILT_IN_ENTITY_TYPES, 'ai-agent']) expect(types).toContain(t);
  });

  it('creates every entity, reads them back in bulk, and each is in sync with its manifest', async () => {
    const failures: string[] = [];
    await Promise.all(
      corpus.map(async ({ file, desired }) => {
        try {
          await entityKind.write.apply(writeChange(desired), applyContext(h.client));
        } catch (error) {
          failures.push(`${file}: ${(error as Error).message}`);
        }
      }),
    );
    expect(failures).toEqual([]);
    h.mark();
    const live = await readAll();
    expect(h.requestsSinceMark()).toHaveLength(1);
    expect(outOfSync(live)).toEqual([]);
  });

  it('writing the same manifests again changes nothing', async () => {
    const before = await readAll();
    await Promise.all(
      corpus.map(({ desired }) =>
        entityKind.write.apply(writeChange(desired, before.get(desired.id)), applyContext(h.client)),
      ),
    );
    const after = await readAll();
    expect(outOfSync(after)).toEqual([]);
    for (const [id, l] of after) expect(l.state.descriptor).toEqual(before.get(id)?.state.descriptor);
  });
});
