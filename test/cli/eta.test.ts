/**
 * The time left of a large apply is never the configured ceiling's guess: against a server that
 * allows 300 requests a minute while the client may send 1,000, the first estimate shown is within
 * a fair margin of the truth (the client has not learned the server's rate in the first seconds,
 * so none is shown until a Retry-After pause or a full minute has shown it).
 */
import { expect, it } from 'vitest';
import { createApplyProgress } from '../../src/cli/progress.js';
import type { Clock, EngineEvent } from '../../src/engine/context.js';
import { capture } from './run.js';

const done = (id: string): EngineEvent => ({
  type: 'operation.done',
  kind: 'entity',
  id,
  action: 'create',
  outcome: 'ok',
  status: 200,
  durationMs: 5,
});
const request: EngineEvent = {
  type: 'request',
  operation: 'create entity',
  method: 'POST',
  status: 200,
  durationMs: 5,
};

/** Seconds in `about 3m 12s left` / `about 42 s left`. */
const secondsLeft = (line: string): number | undefined => {
  const m = /about (?:(\d+)m (\d+)s|(\d+) s) left/.exec(line);
  if (!m) return undefined;
  return m[3] !== undefined ? Number(m[3]) : Number(m[1]) * 60 + Number(m[2]);
};

it('a 1,500-change apply against a 300-a-minute server: no estimate shown is more than a quarter short of the truth, nor half long', () => {
  const TOTAL = 1_500;
  const WINDOW = 300; // the server's requests per minute
  let t = 0;
  let rate = 1_000; // the client's ceiling, until 429s lower it
  const clock: Clock = { now: () => t, sleep: () => Promise.resolve() };
  const out = capture();
  const progress = createApplyProgress({ stream: out.stream, tty: false, clock, ratePerMinute: () => rate });
  progress.emit({
    type: 'plan.ready',
    summary: { create: TOTAL, update: 0, delete: 0, archive: 0, noop: 0 },
    pending: TOTAL,
  });
  progress.start();
  const shown: { at: number; done: number; left: number }[] = [];
  let lastLength = 0;
  const collect = () => {
    const text = out.text();
    for (const line of text.slice(lastLength).split('\n')) {
      const left = secondsLeft(line);
      const doneThen = /(\d+)\/\d+ done/.exec(line)?.[1];
      if (left !== undefined && doneThen !== undefined) shown.push({ at: t, done: Number(doneThen), left });
    }
    lastLength = text.length;
  };
  // Each minute: the server's 300 go at the client's pace (60 ms apart), then a 429 pauses the
  // client until the minute is over, and the rate is lowered.
  const finishedAt: number[] = [];
  let finished = 0;
  for (let minute = 0; finished < TOTAL; minute++) {
    const start = minute * 60_000;
    for (let i = 0; i < WINDOW && finished < TOTAL; i++) {
      t = start + i * 60;
      progress.emit(request);
      collect();
      finished++;
      finishedAt.push(t);
      progress.emit(done(`e${finished}`));
      collect();
    }
    if (finished < TOTAL) {
      t += 60;
      rate = Math.max(WINDOW, Math.round(rate * 0.7));
      progress.emit({ type: 'ratelimit.paused', ms: start + 60_000 - t });
      collect();
    }
  }
  progress.finish();
  expect(shown.length).toBeGreaterThan(0);
  const end = finishedAt[finishedAt.length - 1] ?? 0;
  for (const s of shown) {
    // Never short by more than a quarter of what was really left (the 3× short estimate was the
    // bug), nor longer than the changes left at the server's rate and one more minute.
    const truth = (end - s.at) / 1000;
    const steady = ((TOTAL - s.done) / WINDOW) * 60;
    expect({ ...s, truth, steady }).toMatchObject({
      left: expect.toSatisfy((left: number) => left >= 0.75 * truth && left <= steady + 60),
    });
  }
});
