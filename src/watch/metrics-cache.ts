/**
 * `/metrics` without its cost per scrape: the rendered (and redacted) text is kept while the
 * metrics have not changed, so a scrape of an idle watcher costs a lookup. After a change, one
 * rendering serves every scrape waiting for it, and renderings are at least `minIntervalMs` apart
 * (a scrape waits for the next one rather than getting an older text), so no flood of scrapes,
 * unauthenticated as they are, costs more than one rendering a second.
 */

interface ScrapeCacheOptions {
  /** The exposition text, redacted. */
  render: () => Promise<string>;
  /** Changes whenever a metric changes. */
  version: () => number;
  minIntervalMs?: number;
  now?: () => number;
}

const DEFAULT_METRICS_MIN_INTERVAL_MS = 1000;

/** A function answering each scrape with text no older than the scrape. */
export const createScrapeCache = (o: ScrapeCacheOptions): (() => Promise<string>) => {
  const now = o.now ?? Date.now;
  const minIntervalMs = o.minIntervalMs ?? DEFAULT_METRICS_MIN_INTERVAL_MS;
  let cached: { version: number; text: string; at: number } | undefined;
  let pending: Promise<string> | undefined;
  const renderAfter = async (waitMs: number): Promise<string> => {
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const version = o.version();
    const text = await o.render();
    cached = { version, text, at: now() };
    return text;
  };
  return async () => {
    if (cached && cached.version === o.version()) return cached.text;
    // A rendering not yet started (it waits out the interval) includes whatever this scrape saw.
    if (pending) return pending;
    const waitMs = cached ? Math.max(0, cached.at + minIntervalMs - now()) : 0;
    pending = renderAfter(waitMs).finally(() => {
      pending = undefined;
    });
    return pending;
  };
};
