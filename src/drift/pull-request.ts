/**
 * Drift proposed as one pull request per source, opened or updated, and what that means for the
 * heal: while the pull request is open (or merged, until the source has the merge) the drifted
 * objects are held; once it is closed without merging, the next heal puts git's values back.
 *
 * The pull request is `cortex-sync/drift/<source-slug>`'s, found again by its marker (`body.ts`)
 * among the branch's pull requests that the token's own account opened (anyone else's, marker or
 * not, is not ours). It is updated only when the branch's head is the commit its marker names:
 * a branch someone else pushed to gets a new pull request on a branch of its own, saying why.
 * A file whose new text holds a secret (what redaction would hide: the API key, a configured
 * secret) is never proposed. A push or a pull request GitHub refuses falls back to `report`.
 */
import type { Plan } from '../core/model.js';
import { driftBody, driftTitle, markerOf, proposalDigest, sourceSlug } from './body.js';
import { commitFiles, type DriftGit, pushBranch, remoteHead } from './git-commit.js';
import type { DriftPull, DriftPullPort } from './github.js';
import type { DriftProposal } from './proposal.js';

export type DriftDecision =
  | { action: 'heal'; why: string; pull?: DriftPull }
  | { action: 'hold'; why: string; pull?: DriftPull }
  | { action: 'report'; why: string };

export interface DriftPullRequestInput {
  plan: Plan;
  proposal: DriftProposal;
  /** The source's name (its id): the branch and the marker are its slug. */
  source: string;
  /** The branch the pull request merges into, and the commit the proposal is made on. */
  baseBranch: string;
  baseRevision: string;
  /** The manifest root inside the repository (`''` or `catalog`). */
  prefix: string;
  git: DriftGit;
  github: DriftPullPort;
  /** The redaction of every output: a file it would change is not proposed, the body goes through it. */
  redact: (text: string) => string;
}

export const driftBranch = (source: string): string => `cortex-sync/drift/${sourceSlug(source)}`;

/** The proposal without the files that hold a secret (their objects refused). */
const withoutSecrets = (proposal: DriftProposal, redact: (text: string) => string): DriftProposal => {
  const leaking = proposal.files.filter((f) => f.text !== undefined && redact(f.text) !== f.text).map((f) => f.path);
  if (leaking.length === 0) return proposal;
  const reason = 'its live value holds a secret (what redaction hides): not proposed';
  return {
    ...proposal,
    files: proposal.files.filter((f) => !leaking.includes(f.path)),
    refused: [
      ...proposal.refused,
      ...proposal.objects
        .filter((o) => o.file === undefined || leaking.includes(o.file))
        .map((o) => ({ key: `${o.kind}/${o.id}` as const, reason })),
    ],
  };
};

/** Pushes the proposal as a commit on `branch` over `expected` and opens or updates its pull request. */
const publish = async (
  input: DriftPullRequestInput,
  proposal: DriftProposal,
  target: { branch: string; expected: string | undefined; pull?: DriftPull; why?: string },
): Promise<DriftDecision> => {
  const title = driftTitle(proposal);
  const head = await commitFiles(input.git, {
    base: input.baseRevision,
    prefix: input.prefix,
    files: proposal.files,
    message: `${title}\n\nThe values live in Cortex, written back to the manifests by cortex-sync.`,
  });
  try {
    await pushBranch(input.git, head, target.branch, target.expected);
  } catch (error) {
    return {
      action: 'report',
      why: `could not push ${target.branch} (${(error as Error).message}): reporting drift only`,
    };
  }
  const body = driftBody({
    plan: input.plan,
    proposal,
    marker: { source: sourceSlug(input.source), head, digest: proposalDigest(proposal) },
    dirFromRoot: input.prefix === '' ? '.' : input.prefix,
    ...(target.why !== undefined ? { why: target.why } : {}),
    redact: input.redact,
  });
  const pull = target.pull
    ? await input.github.update(target.pull.number, { title, body })
    : await input.github.create({ branch: target.branch, base: input.baseBranch, title, body });
  return { action: 'hold', why: `${target.pull ? 'updated' : 'opened'} pull request #${pull.number}`, pull };
};

/** The drift as a pull request, and whether the heal may put git's values back (see the module comment). */
export const proposeAsPullRequest = async (input: DriftPullRequestInput): Promise<DriftDecision> => {
  if (input.proposal.objects.length === 0) return { action: 'heal', why: 'no drift' };
  const proposal = withoutSecrets(input.proposal, input.redact);
  if (proposal.files.length === 0)
    return { action: 'report', why: 'no drifted object could be written back to the manifests' };
  const slug = sourceSlug(input.source);
  const branch = driftBranch(input.source);
  const digest = proposalDigest(proposal);
  const me = await input.github.identity();
  const ours = (await input.github.pullsOf(branch)).filter(
    (p) => p.authorId === me && markerOf(p.body)?.source === slug,
  );
  const newest = ours[0];
  const marker = markerOf(newest?.body);
  const remote = await remoteHead(input.git, branch);
  if (newest && marker && newest.state === 'closed' && marker.digest === digest) {
    return newest.merged
      ? {
          action: 'hold',
          why: `pull request #${newest.number} with these values was merged: git gets them at its next commit`,
          pull: newest,
        }
      : {
          action: 'heal',
          why: `pull request #${newest.number} was closed without merging: git's values go back`,
          pull: newest,
        };
  }
  const written = new Set(ours.map((p) => markerOf(p.body)?.head));
  if (remote !== undefined && !written.has(remote)) {
    const other = `${branch}-${digest.slice(0, 8)}`;
    const why = `The branch \`${branch}\` has a commit cortex-sync did not write (${remote.slice(0, 12)}): it is not pushed over; this pull request is on \`${other}\` instead.`;
    return publish(input, proposal, { branch: other, expected: await remoteHead(input.git, other), why });
  }
  if (newest?.state === 'open' && marker) {
    if (marker.digest === digest)
      return { action: 'hold', why: `pull request #${newest.number} proposes this drift`, pull: newest };
    return publish(input, proposal, { branch, expected: remote, pull: newest });
  }
  return publish(input, proposal, { branch, expected: remote });
};
