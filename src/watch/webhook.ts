/**
 * GitHub push webhooks: `X-Hub-Signature-256: sha256=<hex>` is the HMAC-SHA256 of the raw body
 * with the shared secret, compared in constant time. Only a verified push to the followed branch
 * triggers a run; everything else is answered without running anything.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { printable } from '../core/printable.js';
import { signatureBytes } from './webhook-body.js';

/** GitHub caps payloads at 25 MB; a push event is far smaller. Larger bodies get 413. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** True only when `header` is a well-formed `sha256=` signature of `body` under `secret`. */
export const verifySignature = (body: Buffer, header: string | undefined, secret: string): boolean => {
  const given = signatureBytes(header);
  if (secret === '' || given === undefined) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
};

/** `sha256=<hex>` for `body`: what GitHub sends (used by tests and by anyone testing a deployment). */
export const signBody = (body: string | Buffer, secret: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export type WebhookDecision = { trigger: true; revision?: string } | { trigger: false; status: number; reason: string };

/**
 * What a verified delivery asks for: `ping` and pushes to other branches or tags are acknowledged
 * (202/200) and run nothing; a push to `branch` triggers.
 */
export const decideDelivery = (
  event: string | undefined,
  body: Buffer,
  branch: string | undefined,
): WebhookDecision => {
  if (event === 'ping') return { trigger: false, status: 200, reason: 'pong' };
  if (event !== 'push')
    return { trigger: false, status: 202, reason: `ignored event '${printable(event ?? '(none)')}'` };
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return { trigger: false, status: 400, reason: 'the body is not JSON (content type must be application/json)' };
  }
  const ref = typeof payload === 'object' && payload !== null ? (payload as { ref?: unknown }).ref : undefined;
  const after = typeof payload === 'object' && payload !== null ? (payload as { after?: unknown }).after : undefined;
  if (typeof ref !== 'string') return { trigger: false, status: 400, reason: 'push event without a ref' };
  if (branch !== undefined && ref !== `refs/heads/${branch}`) {
    return {
      trigger: false,
      status: 202,
      reason: `ignored push to ${printable(ref)}: following refs/heads/${printable(branch)}`,
    };
  }
  return { trigger: true, ...(typeof after === 'string' ? { revision: after } : {}) };
};

/**
 * Deliveries already accepted, by `X-GitHub-Delivery` id and by the digest of the signed body (the
 * id is not covered by the signature, so a replay under a new id is caught by the body), the
 * newest `capacity` of each: a replayed delivery runs nothing.
 */
export class RecentDeliveries {
  private readonly ids = new Set<string>();
  private readonly digests = new Set<string>();

  constructor(private readonly capacity = 1000) {}

  /** True when this delivery was accepted before; otherwise remembers it and returns false. */
  replayed(id: string | undefined, body: Buffer): boolean {
    const digest = createHash('sha256').update(body).digest('hex');
    const key = id?.trim() ? id.trim().slice(0, 200) : undefined;
    if (this.digests.has(digest) || (key !== undefined && this.ids.has(key))) return true;
    remember(this.digests, digest, this.capacity);
    if (key !== undefined) remember(this.ids, key, this.capacity);
    return false;
  }
}

const remember = (set: Set<string>, value: string, capacity: number): void => {
  set.add(value);
  if (set.size > capacity) {
    const oldest = set.values().next().value;
    if (oldest !== undefined) set.delete(oldest);
  }
};

/**
 * Refused deliveries, logged once per burst: the first at once, the rest counted and logged in one
 * line when `windowMs` has passed, so a flood of bad requests cannot flood the log.
 */
export class RejectionBurst {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: (msg: string, fields: Record<string, unknown>) => void,
    private readonly windowMs = 60_000,
  ) {}

  note(status: number, reason: string): void {
    if (!this.timer) {
      this.log('webhook rejected', { status, reason, quietForMs: this.windowMs });
      this.timer = setTimeout(() => this.flush(), this.windowMs);
      this.timer.unref?.();
      return;
    }
    const key = `${status} ${reason}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** Logs what was counted since the first line (if anything) and ends the burst. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.counts.size === 0) return;
    const reasons = Object.fromEntries(this.counts);
    const count = [...this.counts.values()].reduce((a, b) => a + b, 0);
    this.counts = new Map();
    this.log('webhooks rejected since the last line', { count, reasons, windowMs: this.windowMs });
  }
}
