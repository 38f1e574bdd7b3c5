import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AbortWatch } from '../../src/api/abort-watch.js';

interface Waiter {
  name: string;
  signal: AbortSignal | undefined;
}

describe('AbortWatch', () => {
  it('holds one listener per signal however many wait on it, and cancels only those still waiting', () => {
    const cancelled: string[][] = [];
    const watch = new AbortWatch<Waiter>((set) => cancelled.push([...set].map((w) => w.name)));
    const run = new AbortController();
    const waiters = Array.from({ length: 200 }, (_, i) => ({ name: `r${i}`, signal: run.signal }));
    for (const w of waiters) watch.add(w);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    for (const w of waiters.slice(0, 198)) watch.remove(w);
    run.abort();
    expect(cancelled).toEqual([['r198', 'r199']]);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  it('drops the listener with the signal’s last waiter, so a long-lived signal does not collect them', () => {
    const watch = new AbortWatch<Waiter>(() => {
      throw new Error('nothing aborted');
    });
    const lifetime = new AbortController();
    for (let i = 0; i < 50; i++) {
      const w = { name: `r${i}`, signal: lifetime.signal };
      watch.add(w);
      watch.remove(w);
    }
    expect(getEventListeners(lifetime.signal, 'abort')).toHaveLength(0);
    watch.add({ name: 'no signal', signal: undefined });
    watch.remove({ name: 'never added', signal: lifetime.signal });
  });
});
