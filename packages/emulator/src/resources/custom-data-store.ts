/**
 * Custom data of entities: values set through the API (`source: API`) or by an inbound webhook
 * (`source: INTEGRATION`) are stored here, by entity id and key; values of the descriptor's
 * `x-cortex-custom-metadata` (`source: YAML`) are read from the descriptor. A stored value of a key
 * the descriptor also declares is shown instead of the descriptor's.
 */
import { isObject, isoSeconds, type JsonObject, own, putOwn } from '../util.js';
import { infoOf, type StoredEntity } from './entity-store.js';

export type CustomDataSource = 'YAML' | 'API' | 'INTEGRATION';

export interface StoredCustomData {
  id: number;
  key: string;
  value: unknown;
  description: string | null;
  source: 'API' | 'INTEGRATION';
  /** ms since the epoch. */
  dateUpdated: number;
}

export interface CustomDataState {
  /** Entity id → key → value. */
  byEntity: Record<string, Record<string, StoredCustomData>>;
  nextId: number;
}

export const initialCustomDataState = (): CustomDataState => ({ byEntity: {}, nextId: 1 });

/** The vendor's `CustomData` record. */
export const customDataView = (d: {
  id?: number;
  key: string;
  value: unknown;
  description: string | null;
  source: CustomDataSource;
  dateUpdated: number;
}): JsonObject => ({
  ...(d.id !== undefined ? { id: d.id } : {}),
  key: d.key,
  value: d.value,
  description: d.description,
  source: d.source,
  dateUpdated: isoSeconds(d.dateUpdated),
});

/** The descriptor's custom metadata: `{key: value}` or `{key: {value, description}}`. */
const yamlEntries = (entity: StoredEntity) => {
  const meta = infoOf(entity.descriptor)['x-cortex-custom-metadata'];
  return Object.entries(isObject(meta) ? meta : {}).map(([key, raw]) => {
    const wrapped = isObject(raw) && 'value' in raw;
    return {
      key,
      value: wrapped ? raw.value : raw,
      description: wrapped && typeof raw.description === 'string' ? raw.description : null,
      source: 'YAML' as const,
      dateUpdated: entity.lastUpdated,
    };
  });
};

/** Every custom data record of an entity (descriptor keys first, in order; then stored keys by key). */
export const customDataOf = (state: CustomDataState, entity: StoredEntity): JsonObject[] => {
  const stored = state.byEntity[entity.id] ?? {};
  const fromYaml = yamlEntries(entity).filter((e) => own(stored, e.key) === undefined);
  const fromStore = Object.values(stored).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return [...fromYaml, ...fromStore].map(customDataView);
};

/** One record by key, if the entity has it. */
export const customDataByKey = (state: CustomDataState, entity: StoredEntity, key: string): JsonObject | undefined =>
  customDataOf(state, entity).find((d) => d.key === key);

/** Whether the descriptor declares `key`. */
export const declaredInDescriptor = (entity: StoredEntity, key: string): boolean =>
  yamlEntries(entity).some((e) => e.key === key);

/** Stores (or replaces) a value; returns the stored record. */
export const putCustomData = (
  state: CustomDataState,
  entity: StoredEntity,
  init: { key: string; value: unknown; description?: string | null; source: 'API' | 'INTEGRATION'; now: number },
): StoredCustomData => {
  const slot = (state.byEntity[entity.id] ??= {});
  const existing = own(slot, init.key);
  const record: StoredCustomData = {
    id: existing?.id ?? state.nextId++,
    key: init.key,
    value: init.value,
    description: init.description ?? null,
    source: init.source,
    dateUpdated: init.now,
  };
  putOwn(slot, init.key, record);
  return record;
};

/** Removes a stored value; false when there was none. */
export const removeCustomData = (state: CustomDataState, entity: StoredEntity, key: string): boolean => {
  const slot = state.byEntity[entity.id];
  if (!slot || !own(slot, key)) return false;
  delete slot[key];
  if (Object.keys(slot).length === 0) delete state.byEntity[entity.id];
  return true;
};
