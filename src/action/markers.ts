/**
 * The hidden markers of a plan comment (HTML comments do not render on GitHub), written and read
 * here only (pure). The comment's first line names it (`cortex-sync:plan source=… dir=…`); the
 * reviewed plan is read only from its **trailer** — the block of marker lines the Action writes at
 * the very end — and only when that block is well formed and there is no other marker anywhere in
 * the comment. Every string a repository controls is escaped before it reaches a comment
 * (`untrusted.ts`) so it can never form `<!--`; a comment holding one anyway was not written by
 * this code and is not read (fail closed: no reviewed plan).
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { z } from 'zod';
import { type ChangeFingerprint, FINGERPRINT_HEX } from './digest.js';

/** Bumped when the digest or the trailer changes meaning: a comment of another version is not compared. */
const MARKER_VERSION = 'v2';
const OPEN = '<!--';

const enc = (s: string): string => encodeURIComponent(s);

/** The first line of the one plan comment of a source id and manifest directory on a pull request. */
export const stickyMarker = (sourceId: string, dir: string): string =>
  `<!-- cortex-sync:plan source=${enc(sourceId)} dir=${enc(dir)} -->`;

const digestLine = (digest: string): string => `<!-- cortex-sync:digest ${MARKER_VERSION} ${digest} -->`;

/** The reviewed steps, compressed: base64 of deflated JSON `[[action, key, hash, after?], …]`. */
const changesLine = (list: readonly ChangeFingerprint[]): string => {
  const json = JSON.stringify(
    list.map((f) => (f.after ? [f.action, f.key, f.hash, f.after] : [f.action, f.key, f.hash])),
  );
  return `<!-- cortex-sync:changes ${MARKER_VERSION} ${deflateRawSync(Buffer.from(json, 'utf8')).toString('base64')} -->`;
};

/**
 * The digest of what a plan comment shows between its first line and its trailer: its lines
 * (`\r\n` read as `\n`) without trailing blank ones. An edit of the visible text (a removed
 * archive line) no longer matches it.
 */
export const visibleTextDigest = (text: string): string => {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return `sha256:${createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex')}`;
};

/** The trailer: the plan's digest, the visible text's, and the steps' fingerprints when given. Ends with a newline. */
export const planTrailer = (digest: string, text: string, changes?: readonly ChangeFingerprint[]): string =>
  `${digestLine(digest)}\n<!-- cortex-sync:text ${MARKER_VERSION} ${text} -->\n${changes ? `${changesLine(changes)}\n` : ''}`;

export interface ReviewedPlan {
  digest: string;
  /** Absent when they did not fit in the comment. */
  changes?: ChangeFingerprint[];
}

type PlanCommentRead =
  | { status: 'reviewed'; plan: ReviewedPlan }
  /** A plan comment without a digest: the plan shown could not be applied (invalid manifests, refused). */
  | { status: 'no-digest' }
  /** Not a comment this code wrote as it is now: a marker outside the trailer, twice, malformed, another version. */
  | { status: 'unreadable'; why: string };

const TRAILER_LINE = /^<!-- cortex-sync:([a-z]+) (v[0-9]+) ([A-Za-z0-9+/=:]+) -->$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const INFLATED_LIMIT = 16 * 1024 * 1024;

const HEX = z.string().regex(new RegExp(`^[0-9a-f]{${FINGERPRINT_HEX}}$`));
const fingerprintsSchema = z.array(
  z.union([
    z.tuple([z.string().min(1), z.string().min(1), HEX]),
    z.tuple([z.string().min(1), z.string().min(1), HEX, HEX]),
  ]),
);

const decodeChanges = (data: string): ChangeFingerprint[] | undefined => {
  try {
    const text = inflateRawSync(Buffer.from(data, 'base64'), { maxOutputLength: INFLATED_LIMIT }).toString('utf8');
    const parsed = fingerprintsSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return undefined;
    const list: ChangeFingerprint[] = parsed.data.map(([action, key, hash, after]) => ({
      action,
      key,
      hash,
      ...(after !== undefined ? { after } : {}),
    }));
    return new Set(list.map((f) => f.key)).size === list.length ? list : undefined;
  } catch {
    return undefined;
  }
};

const count = (text: string, part: string): number => text.split(part).length - 1;

/** Reads the reviewed plan from a plan comment's body whose first line must be `sticky`. */
export const readPlanComment = (body: string, sticky: string): PlanCommentRead => {
  const lines = body.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines[0] !== sticky) return { status: 'unreadable', why: 'it does not start with its marker' };
  const trailer: string[] = [];
  for (let i = lines.length - 1; i > 0 && (lines[i] ?? '').startsWith(OPEN); i -= 1) trailer.unshift(lines[i] ?? '');
  if (count(body, OPEN) !== 1 + trailer.length)
    return { status: 'unreadable', why: 'it holds a marker outside the block the Action writes at its end' };
  const fields = new Map<string, string>();
  for (const line of trailer) {
    const m = TRAILER_LINE.exec(line);
    if (!m) return { status: 'unreadable', why: 'its trailer has a malformed marker' };
    const [, name = '', version, value = ''] = m;
    if (version !== MARKER_VERSION)
      return { status: 'unreadable', why: `it was written by another version of cortex-sync (markers ${version})` };
    if (fields.has(name) || (name !== 'digest' && name !== 'changes' && name !== 'text'))
      return { status: 'unreadable', why: `its trailer has the marker \`${name}\` twice or an unknown one` };
    fields.set(name, value);
  }
  const digest = fields.get('digest');
  if (digest === undefined)
    return fields.size === 0 ? { status: 'no-digest' } : { status: 'unreadable', why: 'its trailer has no digest' };
  if (!DIGEST.test(digest)) return { status: 'unreadable', why: 'its digest is malformed' };
  const text = fields.get('text');
  if (text === undefined)
    return {
      status: 'unreadable',
      why: 'its visible text is not bound to its digest (written by an older cortex-sync): run the plan job again',
    };
  if (text !== visibleTextDigest(lines.slice(1, lines.length - trailer.length).join('\n')))
    return {
      status: 'unreadable',
      why: 'its visible text was edited after cortex-sync wrote it, so what was reviewed is not the plan its digest covers',
    };
  const data = fields.get('changes');
  if (data === undefined) return { status: 'reviewed', plan: { digest } };
  const changes = decodeChanges(data);
  if (changes === undefined) return { status: 'unreadable', why: 'its recorded changes cannot be read' };
  return { status: 'reviewed', plan: { digest, changes } };
};
