/** How long a long read (one request per object) will take, said to the person waiting. Pure. */

/** "about 3 min", "about 40 s", "a few seconds". */
export const formatDuration = (ms: number): string => {
  if (ms < 5_000) return 'a few seconds';
  if (ms < 90_000) return `about ${Math.round(ms / 1000)} s`;
  return `about ${Math.round(ms / 60_000)} min`;
};

/**
 * How long `requests` reads take at `requestsPerMinute`: the client sends a quarter of a minute's
 * budget back to back, then spaces requests at the rate.
 */
export const estimateReadMs = (requests: number, requestsPerMinute: number): number => {
  const burst = Math.max(1, Math.floor(requestsPerMinute / 4));
  return (Math.max(0, requests - burst) / requestsPerMinute) * 60_000;
};
