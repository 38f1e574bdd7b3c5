/**
 * The drift pull request's decisions against in-memory ports: a file holding a secret is never
 * proposed; a pull request with our marker that another account opened is not ours; the same
 * drift as a pull request closed without merging heals, as a merged one holds.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/core/model.js';
import { markerText, proposalDigest } from '../../src/drift/body.js';
import type { DriftGit } from '../../src/drift/git-commit.js';
import type { DriftPull, DriftPullPort } from '../../src/drift/github.js';
import type { DriftProposal } from '../../src/drift/proposal.js';
import { proposeAsPullRequest } from '../../src/drift/pull-request.js';

const ME = 41;
const SHA = 'e'.repeat(40);
const plan: Plan = { changes: [], diagnostics: [], summary: { create: 0, update: 1, delete: 0, archive: 0, noop: 0 } };
const proposal = (text: string): DriftProposal => ({
  objects: [{ kind: 'entity', id: 'svc', way: 'changed', file: 'svc.yaml' }],
  files: [{ path: 'svc.yaml', text }],
  refused: [],
});

/** git that answers the plumbing with fixed shas and records what it was asked. */
const fakeGit = (calls: string[][]): DriftGit => ({
  run: async (args) => {
    calls.push([...args]);
    if (args[0] === 'ls-remote') return '';
    if (args[0] === 'ls-tree') return '100644 blob x\tsvc.yaml';
    return `${SHA}\n`;
  },
});

const fakePulls = (existing: DriftPull[]) => {
  const created: { branch: string; body: string }[] = [];
  const port: DriftPullPort = {
    identity: async () => ME,
    pullsOf: async () => existing,
    create: async (input) => {
      created.push(input);
      return { number: 99, state: 'open', merged: false, body: input.body, authorId: ME };
    },
    update: async (number, input) => ({ number, state: 'open', merged: false, body: input.body, authorId: ME }),
  };
  return { port, created };
};

const input = (p: DriftProposal, pulls: DriftPullPort, calls: string[][]) => ({
  plan,
  proposal: p,
  source: 'acme',
  baseBranch: 'main',
  baseRevision: SHA,
  prefix: '',
  git: fakeGit(calls),
  github: pulls,
  redact: (t: string) => t.replaceAll('cortex-key-0123456789', '[REDACTED]'),
});

describe('the drift pull request', () => {
  it('never proposes a file whose live value holds a secret', async () => {
    const calls: string[][] = [];
    const { port, created } = fakePulls([]);
    const decision = await proposeAsPullRequest(input(proposal('title: cortex-key-0123456789\n'), port, calls));
    expect(decision.action).toBe('report');
    expect(created).toEqual([]);
    expect(calls.filter((c) => c[0] === 'push')).toEqual([]);
  });

  it('a pull request with our marker that another account opened is not ours: a new one is opened', async () => {
    const p = proposal('title: B\n');
    const marker = markerText({ source: 'acme', head: SHA, digest: proposalDigest(p) });
    const { port, created } = fakePulls([{ number: 5, state: 'open', merged: false, body: marker, authorId: 7 }]);
    const calls: string[][] = [];
    const decision = await proposeAsPullRequest(input(p, port, calls));
    expect(decision).toMatchObject({ action: 'hold', pull: { number: 99 } });
    expect(created).toHaveLength(1);
    expect(calls.find((c) => c[0] === 'push')).toContain('--force-with-lease=refs/heads/cortex-sync/drift/acme:');
  });

  it('the same drift: closed unmerged heals, merged holds', async () => {
    const p = proposal('title: B\n');
    const body = markerText({ source: 'acme', head: SHA, digest: proposalDigest(p) });
    const closed = fakePulls([{ number: 5, state: 'closed', merged: false, body, authorId: ME }]);
    expect((await proposeAsPullRequest(input(p, closed.port, []))).action).toBe('heal');
    const merged = fakePulls([{ number: 5, state: 'closed', merged: true, body, authorId: ME }]);
    expect((await proposeAsPullRequest(input(p, merged.port, []))).action).toBe('hold');
    expect([...closed.created, ...merged.created]).toEqual([]);
  });
});
