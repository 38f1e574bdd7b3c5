/**
 * The plan's digest: a stable hash of its ordered non-noop changes (kind, id, action, field diff),
 * shown in the pull request's plan comment and compared on merge, so the apply only runs the plan
 * that was reviewed. Also each change's short fingerprint, so a drift can say what differs, and the
 * hidden markers that carry both in a comment.
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { canonicalJson, sortKeys } from '../core/diff.js';
import type { Change, Plan } from '../core/model.js';

const pending = (plan: Plan): Change[] => plan.changes.filter((c) => c.action !== 'noop');

const reviewedShape = (c: Change) => sortKeys({ kind: c.kind, id: c.id, action: c.action, diff: c.diff });

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `sha256:<hex>` of the ordered non-noop changes; equal plans ⇔ equal digests. */
export const planDigest = (plan: Plan): string => `sha256:${sha256(canonicalJson(pending(plan).map(reviewedShape)))}`;

/** One change as `action kind/id hash` (hash: 10 hex digits of its diff). */
export interface ChangeFingerprint {
  key: string;
  action: string;
  hash: string;
}

export const fingerprints = (plan: Plan): ChangeFingerprint[] =>
  pending(plan).map((c) => ({
    key: `${c.kind}/${c.id}`,
    action: c.action,
    hash: sha256(canonicalJson(reviewedShape(c))).slice(0, 10),
  }));

export interface PlanDifference {
  /** In the plan now, not in the reviewed one. */
  added: ChangeFingerprint[];
  /** In the reviewed plan, not in the plan now. */
  removed: ChangeFingerprint[];
  /** In both, with another action or another diff: [reviewed, now]. */
  changed: [ChangeFingerprint, ChangeFingerprint][];
}

export const comparePlans = (
  reviewed: readonly ChangeFingerprint[],
  now: readonly ChangeFingerprint[],
): PlanDifference => {
  const before = new Map(reviewed.map((f) => [f.key, f]));
  const after = new Map(now.map((f) => [f.key, f]));
  const changed: [ChangeFingerprint, ChangeFingerprint][] = [];
  for (const f of now) {
    const old = before.get(f.key);
    if (old && (old.action !== f.action || old.hash !== f.hash)) changed.push([old, f]);
  }
  return {
    added: now.filter((f) => !before.has(f.key)),
    removed: reviewed.filter((f) => !after.has(f.key)),
    changed,
  };
};

// Hidden markers in a comment (HTML comments do not render on GitHub).

const enc = (s: string): string => encodeURIComponent(s);

/** Identifies the one plan comment of a source id and manifest directory on a pull request. */
export const stickyMarker = (sourceId: string, dir: string): string =>
  `<!-- cortex-sync:plan source=${enc(sourceId)} dir=${enc(dir)} -->`;

export const digestMarker = (digest: string): string => `<!-- cortex-sync:digest ${digest} -->`;

const DIGEST_RE = /<!-- cortex-sync:digest (sha256:[0-9a-f]{64}) -->/;
export const readDigest = (body: string): string | undefined => DIGEST_RE.exec(body)?.[1];

/** The reviewed changes, compressed (base64 of deflated `action key hash` lines). */
export const changesMarker = (list: readonly ChangeFingerprint[]): string => {
  const lines = list.map((f) => `${f.action} ${f.key} ${f.hash}`).join('\n');
  return `<!-- cortex-sync:changes ${deflateRawSync(Buffer.from(lines, 'utf8')).toString('base64')} -->`;
};

const CHANGES_RE = /<!-- cortex-sync:changes ([A-Za-z0-9+/=]*) -->/;
/** The reviewed changes from a comment; undefined when absent or unreadable. */
export const readChanges = (body: string): ChangeFingerprint[] | undefined => {
  const data = CHANGES_RE.exec(body)?.[1];
  if (data === undefined) return undefined;
  try {
    const text = inflateRawSync(Buffer.from(data, 'base64')).toString('utf8');
    if (text === '') return [];
    return text.split('\n').map((line) => {
      const first = line.indexOf(' ');
      const last = line.lastIndexOf(' ');
      if (first < 0 || last <= first) throw new Error('bad line');
      return { action: line.slice(0, first), key: line.slice(first + 1, last), hash: line.slice(last + 1) };
    });
  } catch {
    return undefined;
  }
};
