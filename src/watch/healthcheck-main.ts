/**
 * The container's HEALTHCHECK: `GET /healthz` on the address `CORTEX_SYNC_LISTEN` names (the image
 * sets it; a wildcard address is probed on loopback). Exits 0 on 200, 1 otherwise, within 4 s.
 * The image sets the address through that variable rather than `--listen`, so that this check and
 * the watcher always agree.
 */
import { DEFAULT_LISTEN, parseListen, probeUrl } from './listen.js';

const check = async (): Promise<number> => {
  const url = probeUrl(parseListen(process.env.CORTEX_SYNC_LISTEN?.trim() || DEFAULT_LISTEN), '/healthz');
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(4000) });
    process.stdout.write(`${url}: ${response.status} ${(await response.text()).trim()}\n`);
    return response.ok ? 0 : 1;
  } catch (error) {
    process.stdout.write(`${url}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
};

process.exitCode = await check().catch((error: unknown) => {
  process.stdout.write(`${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
