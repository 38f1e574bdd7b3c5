/**
 * The drift pull request as a reader sees it: the title ("Drift: N objects changed outside git"),
 * the body (the Markdown plan from git to live, by the one Markdown renderer, which escapes every
 * string a repository or the workspace controls; the objects not proposed with their reason,
 * escaped the same way) and the hidden marker it is found again by (the source's slug, the head
 * cortex-sync wrote and the digest of what it proposed: our own characters only, so no escaped
 * string can forge one). Everything goes through the caller's redaction before it leaves. Pure.
 */
import { createHash } from 'node:crypto';
import { countOf } from '../core/plural.js';
import type { Action, Change, FieldDiff, Plan, PlanSummary } from '../core/model.js';
import { renderPlanMarkdown } from '../render/markdown.js';
import { untrustedCode, untrustedMessage } from '../render/untrusted.js';
import type { DriftProposal, DriftWay } from './proposal.js';

/** GitHub's limit on a pull request's body is 65,536 characters; room for the marker and notes. */
const BODY_PLAN_LIMIT = 56_000;

/** The marker of one source's drift pull request. */
export interface DriftMarker {
  source: string;
  head: string;
  digest: string;
}

const MARKER = /<!-- cortex-sync:drift source=([a-z0-9-]{1,100}) head=([0-9a-f]{40,64}) digest=([0-9a-f]{64}) -->/;

export const markerText = (m: DriftMarker): string =>
  `<!-- cortex-sync:drift source=${m.source} head=${m.head} digest=${m.digest} -->`;

/** The marker a body holds, when it holds one. */
export const markerOf = (body: string | null | undefined): DriftMarker | undefined => {
  const found = MARKER.exec(body ?? '');
  return found ? { source: found[1] ?? '', head: found[2] ?? '', digest: found[3] ?? '' } : undefined;
};

/** A source's name as a branch segment and marker value: lower case, `a-z0-9-`, at most 60 characters. */
export const sourceSlug = (source: string): string => {
  const slug = source
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 8);
  return slug === '' ? `source-${hash}` : slug === source ? slug : `${slug}-${hash}`;
};

/** What a proposal changes, as one digest: the same drift proposes the same digest. */
export const proposalDigest = (proposal: Pick<DriftProposal, 'files'>): string => {
  const hash = createHash('sha256');
  for (const f of proposal.files) hash.update(`${f.path}\u0000${f.text ?? '\u0001removed'}\u0000`);
  return hash.digest('hex');
};

export const driftTitle = (proposal: DriftProposal): string =>
  `Drift: ${countOf(proposal.objects.length, 'object')} changed outside git`;

const SHOWN_AS: Record<DriftWay, Action> = { changed: 'update', removed: 'delete', added: 'create' };
const reversed = (d: FieldDiff): FieldDiff => ({
  path: d.path,
  ...(d.after !== undefined ? { before: d.after } : {}),
  ...(d.before !== undefined ? { after: d.before } : {}),
});

/** The drifted changes of a plan (live → git) as a plan from git to live. */
export const gitToLive = (plan: Plan, proposal: Pick<DriftProposal, 'objects'>): Plan => {
  const ways = new Map(proposal.objects.map((o) => [`${o.kind}/${o.id}`, o.way]));
  const summary: PlanSummary = { create: 0, update: 0, delete: 0, archive: 0, noop: 0 };
  const changes: Change[] = [];
  for (const c of plan.changes) {
    const way = ways.get(`${c.kind}/${c.id}`);
    if (way === undefined) continue;
    const action = SHOWN_AS[way];
    summary[action] += 1;
    changes.push({
      kind: c.kind,
      id: c.id,
      action,
      ...(c.source !== undefined ? { source: c.source } : {}),
      ...(c.line !== undefined ? { line: c.line } : {}),
      diff: c.diff.map(reversed),
      waitsFor: [],
    });
  }
  return { changes, diagnostics: [], summary };
};

export interface BodyInput {
  plan: Plan;
  proposal: DriftProposal;
  marker: DriftMarker;
  /** The manifest root from the repository root (`.` or `catalog`). */
  dirFromRoot: string;
  /** Why this is a new pull request rather than the last one updated, when it is. */
  why?: string;
  /** The redaction of everything but the marker (our own characters, which a key's look-alike must not mangle). */
  redact: (text: string) => string;
}

/** The body (see the module comment). */
export const driftBody = (input: BodyInput): string => {
  const { proposal } = input;
  const parts = [
    `These objects were changed in Cortex, not in git. Merging this pull request makes git say what is live; closing it without merging puts git's values back at the next heal. While it is open, cortex-sync leaves them as they are.`,
  ];
  if (input.why !== undefined) parts.push(`> [!NOTE]\n> ${input.why}`);
  parts.push(
    renderPlanMarkdown(gitToLive(input.plan, proposal), {
      title: 'Drift: from git to live',
      limit: BODY_PLAN_LIMIT,
      dirFromRoot: input.dirFromRoot,
    }),
  );
  const rendered = proposal.files.filter((f) => f.reformatted).map((f) => untrustedCode(f.path));
  if (rendered.length > 0)
    parts.push(
      `**Rendered again** (the edit was in a flow list or a block scalar): ${rendered.join(', ')}: their layout may differ beyond the changed values.`,
    );
  if (proposal.refused.length > 0) {
    const items = proposal.refused
      .slice(0, 50)
      .map((r) => `- ${untrustedCode(r.key)}: ${untrustedMessage(r.reason)}`)
      .join('\n');
    parts.push(
      `**Not in this pull request** (${proposal.refused.length}): drift cortex-sync could not write back to the manifests; change them by hand.\n\n${items}`,
    );
  }
  return `${markerText(input.marker)}\n\n${input.redact(parts.join('\n\n'))}\n`;
};
