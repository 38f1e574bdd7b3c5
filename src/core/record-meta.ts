/**
 * What a source's ownership record keeps besides its keys (pure types; the port that reads and
 * writes records, `ownership/store.ts`, uses them, and so does the plan of the record's writes).
 */

/**
 * What a source's record holds besides its objects: the origin its source id is bound to (see
 * `core/source-binding.ts`), and the settings of its last apply that limit removals, so that a
 * later plan can name a protect pattern removed or a count limit raised since.
 */
export interface RecordMeta {
  origin?: string;
  protect?: string[];
  maxDeleteCount?: number;
}

/**
 * Where an object of the record was declared, as of the apply that last wrote the record: the
 * manifest file (relative to the manifest root), and for objects another source may co-own (an
 * entity's descriptor) the keys this source's manifest sets. What a rename of a manifest file, or
 * two sources writing parts of one entity, will need to know. Unknown for objects recorded before.
 */
export interface Declaration {
  file?: string;
  keys?: readonly string[];
}
