/**
 * The ownership store the engine keeps its records with, by default: as entities of a custom
 * entity type, which the entity kind's folder reads and writes (`entity/records/`). Beside the
 * registry (not in it): the store is not a kind, and its records name the registry's kinds.
 */
import type { OwnershipStore } from '../ownership/store.js';
import { entityRecordStore } from './entity/records/store.js';

export const OWNERSHIP_STORE: OwnershipStore = entityRecordStore;
