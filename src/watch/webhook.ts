/**
 * GitHub push webhooks: `X-Hub-Signature-256: sha256=<hex>` is the HMAC-SHA256 of the raw body
 * with the shared secret, compared in constant time. Only a verified push to the followed branch
 * triggers a run; everything else is answered without running anything.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** GitHub caps payloads at 25 MB; a push event is far smaller. Larger bodies get 413. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/** True only when `header` is a well-formed `sha256=` signature of `body` under `secret`. */
export const verifySignature = (body: Buffer, header: string | undefined, secret: string): boolean => {
  if (secret === '' || header === undefined) return false;
  const hex = SIGNATURE.exec(header.trim())?.[1];
  if (hex === undefined) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(hex, 'hex');
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
  if (event !== 'push') return { trigger: false, status: 202, reason: `ignored event '${event ?? '(none)'}'` };
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
    return { trigger: false, status: 202, reason: `ignored push to ${ref}: following refs/heads/${branch}` };
  }
  return { trigger: true, ...(typeof after === 'string' ? { revision: after } : {}) };
};
