/** Saving and loading the emulator's state as a JSON file (key values are stored only as hashes). */
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { type EmulatorState, INITIAL_STATE, initialState } from './resources/index.js';
import { scorecardFromDataFile } from './resources/scorecard-descriptor.js';
import { initialScorecardsState, type StoredScorecard } from './resources/scorecards.js';
import { isObject } from './util.js';

const FORMAT_VERSION = 1;

/** The state saved in `file`, or a fresh one when the file does not exist. Unknown slices are ignored. */
export const loadState = async (file: string | undefined, now: () => number = Date.now): Promise<EmulatorState> => {
  const state = initialState();
  if (file === undefined || !existsSync(file)) return state;
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (!isObject(parsed) || parsed.version !== FORMAT_VERSION || !isObject(parsed.state)) {
    throw new Error(`${file} is not an emulator data file (version ${FORMAT_VERSION})`);
  }
  const saved = parsed.state;
  const target = state as unknown as Record<string, unknown>;
  for (const key of Object.keys(INITIAL_STATE)) {
    if (isObject(saved[key])) target[key] = saved[key];
  }
  state.scorecards = { items: scorecardsOfDataFile(file, saved.scorecards, now()) };
  return state;
};

/**
 * The scorecards of a data file: `{items: [...]}` (or a bare list), each in the stored form or as a
 * vendor descriptor (so they can be written by hand). Without the key, the sample scorecards.
 */
const scorecardsOfDataFile = (file: string, slice: unknown, now: number): StoredScorecard[] => {
  if (slice === undefined) return initialScorecardsState().items;
  const items = Array.isArray(slice) ? slice : isObject(slice) ? slice.items : undefined;
  if (!Array.isArray(items)) throw new Error(`${file}: state.scorecards must be {items: [...]} or a list`);
  return items.map((item, i) => {
    const scorecard = scorecardFromDataFile(item, now);
    if (typeof scorecard === 'string') throw new Error(`${file}: state.scorecards item ${i}: ${scorecard}`);
    return scorecard;
  });
};

/** Writes the state atomically (temp file + rename). */
export const saveState = async (file: string, state: EmulatorState): Promise<void> => {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ version: FORMAT_VERSION, state }, null, 2)}\n`, 'utf8');
  await rename(tmp, file);
};
