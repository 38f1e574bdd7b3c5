/**
 * Reading a webhook's body without letting an unauthenticated sender hold the watcher's memory.
 * The signature header is checked for its shape before any byte of the body is read (an unsigned
 * request is refused on its headers); the body is fed into the HMAC as it arrives, and is read
 * only while it fits its own cap, the bytes all bodies being read may hold together, and a
 * deadline. A delivery over any of them is refused and its connection closed.
 */
import { createHmac, type Hmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Bodies read at once (deliveries beyond it are answered 503 with `Retry-After`). */
const MAX_WEBHOOK_BODIES = 8;
/** Bytes all bodies being read may hold together. */
const MAX_WEBHOOK_BYTES_IN_FLIGHT = 4 * 1024 * 1024;
/** A body must have arrived this long after its headers (GitHub sends one at once); below the port's 8 s quiet-connection timeout, so a stalled body is answered, not cut off. */
const WEBHOOK_BODY_TIMEOUT_MS = 5_000;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** The 32 bytes of a well-formed `sha256=<64 hex digits>` header, or undefined. */
export const signatureBytes = (header: string | undefined): Buffer | undefined => {
  const hex = header === undefined ? undefined : SIGNATURE.exec(header.trim())?.[1];
  return hex === undefined ? undefined : Buffer.from(hex, 'hex');
};

/** The bodies being read and the bytes they hold, against their bounds. */
export class BodyBudget {
  private bodies = 0;
  private bytes = 0;

  constructor(
    readonly maxBodies = MAX_WEBHOOK_BODIES,
    readonly maxBytes = MAX_WEBHOOK_BYTES_IN_FLIGHT,
  ) {}

  /** A slot for one body, or undefined when `maxBodies` are being read. */
  open(): { take(n: number): boolean; release(): void } | undefined {
    if (this.bodies >= this.maxBodies) return undefined;
    this.bodies += 1;
    let held = 0;
    let released = false;
    return {
      take: (n) => {
        if (this.bytes + n > this.maxBytes) return false;
        this.bytes += n;
        held += n;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.bodies -= 1;
        this.bytes -= held;
      },
    };
  }

  /** For tests and `/status`: what is held now. */
  inUse(): { bodies: number; bytes: number } {
    return { bodies: this.bodies, bytes: this.bytes };
  }
}

export type BodyRead =
  | { kind: 'read'; body: Buffer; signed: boolean }
  | { kind: 'too-large' }
  | { kind: 'busy' }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

interface BodyReadOptions {
  limit: number;
  budget: BodyBudget;
  secret: string;
  /** The well-formed signature the headers carry (`signatureBytes`). */
  signature: Buffer;
  timeoutMs?: number;
}

/**
 * Reads the body into the HMAC under `secret` while it fits `limit` and the budget, within the
 * deadline; `signed` says whether it matched `signature`. Stops reading at the first bound it
 * meets (the caller answers and closes the connection).
 */
export const readSignedBody = (req: IncomingMessage, o: BodyReadOptions): Promise<BodyRead> =>
  new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > o.limit) return resolve({ kind: 'too-large' });
    const slot = o.budget.open();
    if (!slot) return resolve({ kind: 'busy' });
    const hmac: Hmac = createHmac('sha256', o.secret);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (read: BodyRead) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      // What was read is the caller's now; the rest of a refused body is discarded, never kept.
      slot.release();
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > o.limit) return finish({ kind: 'too-large' });
      if (!slot.take(chunk.length)) return finish({ kind: 'busy' });
      hmac.update(chunk);
      chunks.push(chunk);
    };
    const onEnd = () => {
      const digest = hmac.digest();
      const signed = digest.length === o.signature.length && timingSafeEqual(digest, o.signature);
      finish({ kind: 'read', body: Buffer.concat(chunks), signed });
    };
    const onClose = () => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), o.timeoutMs ?? WEBHOOK_BODY_TIMEOUT_MS);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
