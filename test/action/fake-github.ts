/**
 * A local fake of the parts of GitHub's API the Action uses, on 127.0.0.1: who a token is
 * (`GET /user`, and GraphQL `viewer`), issue comments (list with pagination, create, update,
 * delete, GitHub's 65,536-character limit) the pull requests of a commit, a branch's head and a commit's first parent. Records every call;
 * a read-only token gets 403 on writes, as a fork's would.
 *
 * Tokens behave as GitHub documents them: an installation token — the workflow's `GITHUB_TOKEN`
 * (the `github-actions` app) or a GitHub App's — is refused `GET /user` with 403 "Resource not
 * accessible by integration" and is its app's bot account (`<slug>[bot]`) as GraphQL `viewer`; a
 * personal access token is its user for both. A comment is written as the token's account, and
 * only that account may edit or delete it. `GET /users/{login}` finds an account by login, in any
 * letter case (the workflow's bot, every token's account, and `accounts`); 404 for anyone else.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAccount {
  login: string;
  id: number;
  type: 'User' | 'Bot';
  /** The author association GitHub shows on this account's comments. */
  association: string;
}

export interface FakeComment {
  id: number;
  issue: number;
  body: string;
  /** Default: the workflow's bot. */
  author?: Omit<FakeAccount, 'id'> & { id?: number };
  /** GitHub's `created_at` and `updated_at` (ISO, to the second); default: the fake's first second. */
  createdAt?: string;
  updatedAt?: string;
}

/** Hold the next `count` matching calls until all of them have arrived (two runs forced to interleave). */
export interface FakeBarrier {
  method: string;
  path: RegExp;
  count: number;
}

/** Answer matching calls with this status (and headers) `times` times (Infinity: forever), before anything else. */
export interface FakeFault {
  method: string;
  path: RegExp;
  status: number;
  headers?: Record<string, string>;
  times: number;
}

/** The account the workflow's `GITHUB_TOKEN` writes as. */
export const ACTIONS_BOT: FakeAccount = {
  login: 'github-actions[bot]',
  id: 41898282,
  type: 'Bot',
  association: 'NONE',
};

/** A maintainer who reviews pull requests. */
export const MAINTAINER: FakeAccount = { login: 'maintainer', id: 5150, type: 'User', association: 'MEMBER' };

/** How a token authenticates: an installation (no `GET /user`) or a user's personal token. */
export interface FakeToken {
  kind: 'installation' | 'personal';
  account: FakeAccount;
}

export interface FakeCall {
  method: string;
  path: string;
  /** The token the call came with (`token X` or `Bearer X`). */
  token?: string;
}

/** A pull request review (`GET /repos/…/pulls/{n}/reviews`), as GitHub lists them, oldest first. */
export interface FakeReview {
  id: number;
  pullRequest: number;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';
  author: FakeAccount;
  /** ISO, to the second; absent for a pending review. */
  submittedAt?: string;
}

export interface FakePullRequest {
  number: number;
  merged: boolean;
  mergeCommitSha?: string;
}

/** A pull request opened through the API (`GET/POST /repos/…/pulls`, `PATCH /repos/…/pulls/{n}`). */
export interface FakePull {
  number: number;
  head: string;
  base: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged: boolean;
  author: FakeAccount;
}

export interface FakeGitHub {
  url: string;
  /** Pull requests opened through the API; a test closes or merges one by setting its fields. */
  pulls: FakePull[];
  calls: FakeCall[];
  comments: FakeComment[];
  /** Pull requests associated with a commit sha. */
  commits: Map<string, FakePullRequest[]>;
  /** The head of each branch (`GET /repos/…/git/ref/heads/{branch}`); `main` is `DEFAULT_HEAD` until set. */
  branches: Map<string, string>;
  /** A commit's first parent (`GET /repos/…/commits/{sha}`); a commit not listed is 404. */
  parents: Map<string, string>;
  /** Tokens that may only read. */
  readOnlyTokens: Set<string>;
  /** Who each token is; a token not listed is the workflow's `GITHUB_TOKEN`. */
  tokens: Map<string, FakeToken>;
  /** Accounts `GET /users/{login}` finds besides the workflow's bot and the tokens' (a renamed or deleted one: remove it). */
  accounts: FakeAccount[];
  /** Answer GraphQL with this status (e.g. 403, a server without GraphQL). */
  graphqlStatus?: number;
  /** Failures injected before routing (a 502, a 429 with `Retry-After`). */
  faults: FakeFault[];
  barriers: FakeBarrier[];
  reviews: FakeReview[];
  /** A review of `pullRequest` submitted now (one second after the fake's last write or review). */
  review(pullRequest: number, state: FakeReview['state'], author?: FakeAccount): FakeReview;
  writes(): FakeCall[];
  stop(): Promise<void>;
}

const MAX_BODY = 65_536;

/** The head of `main` until a test says otherwise: the merge commit of the recorded push payload. */
export const DEFAULT_HEAD = '9d8c7b6a5f4e3d2c1b0a99887766554433221100';
const PER_PAGE_DEFAULT = 30;

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
};

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

const EPOCH = '2026-01-01T00:00:00Z';

const commentJson = (c: FakeComment, base: string) => {
  const author = c.author ?? ACTIONS_BOT;
  return {
    id: c.id,
    body: c.body,
    created_at: c.createdAt ?? EPOCH,
    updated_at: c.updatedAt ?? c.createdAt ?? EPOCH,
    html_url: `${base}/issues/${c.issue}#issuecomment-${c.id}`,
    user: { login: author.login, type: author.type, ...(author.id !== undefined ? { id: author.id } : {}) },
    author_association: author.association,
  };
};

const pullJson = (p: FakePull, owner: string) => ({
  number: p.number,
  state: p.state,
  merged_at: p.merged ? '2026-01-01T00:00:00Z' : null,
  title: p.title,
  body: p.body,
  head: { ref: p.head, label: `${owner}:${p.head}` },
  base: { ref: p.base },
  user: { login: p.author.login, id: p.author.id, type: p.author.type },
  html_url: `https://github.example/pulls/${p.number}`,
});

const INSTALLATION: FakeToken = { kind: 'installation', account: ACTIONS_BOT };

export const startFakeGitHub = async (): Promise<FakeGitHub> => {
  const calls: FakeCall[] = [];
  const comments: FakeComment[] = [];
  const commits = new Map<string, FakePullRequest[]>();
  const branches = new Map<string, string>([['main', DEFAULT_HEAD]]);
  const parents = new Map<string, string>();
  const readOnlyTokens = new Set<string>();
  const tokens = new Map<string, FakeToken>();
  const accounts: FakeAccount[] = [];
  const pulls: FakePull[] = [];
  const byLogin = (login: string): FakeAccount | undefined =>
    [ACTIONS_BOT, ...[...tokens.values()].map((t) => t.account), ...accounts].find(
      (a) => a.login.toLowerCase() === login.toLowerCase(),
    );
  let nextId = 1000;
  const faults: FakeFault[] = [];
  const barriers: FakeBarrier[] = [];
  const reviews: FakeReview[] = [];
  const held = new Map<FakeBarrier, (() => void)[]>();
  const pass = async (barrier: FakeBarrier): Promise<void> => {
    barrier.count -= 1;
    const waiting = held.get(barrier) ?? [];
    held.set(barrier, waiting);
    const arrived = new Promise<void>((resolve) => waiting.push(resolve));
    if (barrier.count === 0) for (const release of waiting) release();
    await arrived;
  };
  // GitHub's timestamps are to the second: each write of the fake is one second later.
  let seconds = Date.parse(EPOCH) / 1000;
  const now = (): string => new Date((seconds += 1) * 1000).toISOString().replace('.000Z', 'Z');
  const fake = { graphqlStatus: undefined as number | undefined };
  const isAuthor = (comment: FakeComment, account: FakeAccount): boolean =>
    (comment.author ?? ACTIONS_BOT).id === account.id;

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const auth = req.headers.authorization;
      const token = auth?.replace(/^(token|bearer)\s+/i, '');
      calls.push({ method: req.method ?? 'GET', path: url.pathname, ...(token ? { token } : {}) });
      const barrier = barriers.find((b) => b.count > 0 && b.method === req.method && b.path.test(url.pathname));
      if (barrier) await pass(barrier);
      const fault = faults.find((f) => f.times > 0 && f.method === req.method && f.path.test(url.pathname));
      if (fault) {
        fault.times -= 1;
        return send(res, fault.status, { message: `injected ${fault.status}` }, fault.headers ?? {});
      }
      if (!token) return send(res, 401, { message: 'Requires authentication' });
      const identity = tokens.get(token) ?? INSTALLATION;
      if (url.pathname === '/user' && req.method === 'GET') {
        if (identity.kind === 'installation')
          return send(res, 403, { message: 'Resource not accessible by integration' });
        return send(res, 200, { login: identity.account.login, id: identity.account.id, type: identity.account.type });
      }
      const user = /^\/users\/([^/]+)$/.exec(url.pathname);
      if (user && req.method === 'GET') {
        const account = byLogin(decodeURIComponent(user[1] ?? ''));
        if (!account) return send(res, 404, { message: 'Not Found' });
        return send(res, 200, { login: account.login, id: account.id, type: account.type });
      }
      if (url.pathname === '/graphql' && req.method === 'POST') {
        const body = (await readBody(req)) as { query?: string };
        if (fake.graphqlStatus !== undefined)
          return send(res, fake.graphqlStatus, { message: 'GraphQL is not available' });
        if (!/\bviewer\b/.test(body?.query ?? ''))
          return send(res, 200, { errors: [{ message: 'unsupported query' }] });
        return send(res, 200, { data: { viewer: { login: identity.account.login, databaseId: identity.account.id } } });
      }
      if (req.method !== 'GET' && readOnlyTokens.has(token))
        return send(res, 403, { message: 'Resource not accessible by integration' });

      let m = /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const issue = Number(m[1]);
        const perPage = Number(url.searchParams.get('per_page') ?? PER_PAGE_DEFAULT);
        const page = Number(url.searchParams.get('page') ?? 1);
        const all = comments.filter((c) => c.issue === issue);
        const slice = all.slice((page - 1) * perPage, page * perPage);
        const headers: Record<string, string> = {};
        if (page * perPage < all.length) {
          const next = new URL(url);
          next.searchParams.set('page', String(page + 1));
          headers.link = `<http://${req.headers.host}${next.pathname}${next.search}>; rel="next"`;
        }
        return send(
          res,
          200,
          slice.map((c) => commentJson(c, '')),
          headers,
        );
      }
      if (m && req.method === 'POST') {
        const body = (await readBody(req)) as { body?: string };
        if (typeof body?.body !== 'string') return send(res, 422, { message: 'body is missing' });
        if (body.body.length >= MAX_BODY)
          return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' });
        const at = now();
        const comment: FakeComment = {
          id: nextId++,
          issue: Number(m[1]),
          body: body.body,
          author: identity.account,
          createdAt: at,
          updatedAt: at,
        };
        comments.push(comment);
        return send(res, 201, commentJson(comment, ''));
      }
      m = /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(url.pathname);
      if (m && req.method === 'DELETE') {
        const index = comments.findIndex((c) => c.id === Number(m?.[1]));
        const comment = comments[index];
        if (!comment) return send(res, 404, { message: 'Not Found' });
        if (!isAuthor(comment, identity.account))
          return send(res, 403, { message: 'Resource not accessible by integration' });
        comments.splice(index, 1);
        res.writeHead(204).end();
        return;
      }
      if (m && req.method === 'PATCH') {
        const comment = comments.find((c) => c.id === Number(m?.[1]));
        if (!comment) return send(res, 404, { message: 'Not Found' });
        if (!isAuthor(comment, identity.account))
          return send(res, 403, { message: 'Resource not accessible by integration' });
        const body = (await readBody(req)) as { body?: string };
        if (typeof body?.body !== 'string') return send(res, 422, { message: 'body is missing' });
        if (body.body.length >= MAX_BODY)
          return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' });
        comment.body = body.body;
        comment.updatedAt = now();
        return send(res, 200, commentJson(comment, ''));
      }
      m = /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)\/reviews$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const perPage = Number(url.searchParams.get('per_page') ?? PER_PAGE_DEFAULT);
        const page = Number(url.searchParams.get('page') ?? 1);
        const all = reviews.filter((r) => r.pullRequest === Number(m?.[1]));
        const headers: Record<string, string> = {};
        if (page * perPage < all.length) {
          const next = new URL(url);
          next.searchParams.set('page', String(page + 1));
          headers.link = `<http://${req.headers.host}${next.pathname}${next.search}>; rel="next"`;
        }
        return send(
          res,
          200,
          all.slice((page - 1) * perPage, page * perPage).map((r) => ({
            id: r.id,
            state: r.state,
            user: { login: r.author.login, id: r.author.id, type: r.author.type },
            ...(r.submittedAt !== undefined ? { submitted_at: r.submittedAt } : {}),
          })),
          headers,
        );
      }
      m = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]+)\/pulls$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const prs = commits.get(m[1] ?? '') ?? [];
        return send(
          res,
          200,
          prs.map((pr) => ({
            number: pr.number,
            state: pr.merged ? 'closed' : 'open',
            merged_at: pr.merged ? '2026-01-01T00:00:00Z' : null,
            merge_commit_sha: pr.mergeCommitSha ?? null,
          })),
        );
      }
      m = /^\/repos\/([^/]+)\/[^/]+\/pulls$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const head = url.searchParams.get('head');
        const state = url.searchParams.get('state') ?? 'open';
        const found = pulls
          .filter((p) => head === null || `${m?.[1]}:${p.head}` === head)
          .filter((p) => state === 'all' || p.state === state)
          .sort((a, b) => b.number - a.number);
        return send(
          res,
          200,
          found.map((p) => pullJson(p, m?.[1] ?? '')),
        );
      }
      if (m && req.method === 'POST') {
        const body = (await readBody(req)) as { head?: string; base?: string; title?: string; body?: string };
        if (!body?.head || !body.base || !body.title)
          return send(res, 422, { message: 'head, base and title are required' });
        if ((body.body ?? '').length > MAX_BODY)
          return send(res, 422, { message: 'body is too long (maximum is 65536 characters)' });
        if (pulls.some((p) => p.head === body.head && p.state === 'open'))
          return send(res, 422, { message: `A pull request already exists for ${body.head}.` });
        const pull: FakePull = {
          number: nextId++,
          head: body.head,
          base: body.base,
          title: body.title,
          body: body.body ?? '',
          state: 'open',
          merged: false,
          author: identity.account,
        };
        pulls.push(pull);
        return send(res, 201, pullJson(pull, m[1] ?? ''));
      }
      m = /^\/repos\/([^/]+)\/[^/]+\/pulls\/(\d+)$/.exec(url.pathname);
      if (m && req.method === 'PATCH') {
        const pull = pulls.find((p) => p.number === Number(m?.[2]));
        if (!pull) return send(res, 404, { message: 'Not Found' });
        if (pull.author.id !== identity.account.id)
          return send(res, 403, { message: 'Resource not accessible by integration' });
        const body = (await readBody(req)) as { title?: string; body?: string };
        if (typeof body?.title === 'string') pull.title = body.title;
        if (typeof body?.body === 'string') pull.body = body.body;
        return send(res, 200, pullJson(pull, m[1] ?? ''));
      }
      m = /^\/repos\/[^/]+\/[^/]+\/git\/ref\/(.+)$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const ref = decodeURIComponent(m[1] ?? '');
        const head = ref.startsWith('heads/') ? branches.get(ref.slice('heads/'.length)) : undefined;
        if (!head) return send(res, 404, { message: 'Not Found' });
        return send(res, 200, { ref: `refs/${ref}`, object: { sha: head, type: 'commit' } });
      }
      m = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]{40})$/.exec(url.pathname);
      if (m && req.method === 'GET') {
        const parent = parents.get(m[1] ?? '');
        if (!parent) return send(res, 404, { message: 'No commit found for SHA' });
        return send(res, 200, { sha: m[1], parents: [{ sha: parent }], files: [] });
      }
      return send(res, 404, { message: 'Not Found' });
    })().catch((error: unknown) => send(res, 500, { message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pulls,
    calls,
    comments,
    commits,
    branches,
    parents,
    readOnlyTokens,
    tokens,
    accounts,
    faults,
    barriers,
    reviews,
    review: (pullRequest, state, author = MAINTAINER) => {
      const review: FakeReview = {
        id: nextId++,
        pullRequest,
        state,
        author,
        ...(state === 'PENDING' ? {} : { submittedAt: now() }),
      };
      reviews.push(review);
      return review;
    },
    get graphqlStatus() {
      return fake.graphqlStatus;
    },
    set graphqlStatus(status: number | undefined) {
      fake.graphqlStatus = status;
    },
    // GraphQL queries are reads, though sent with POST.
    writes: () => calls.filter((c) => c.method !== 'GET' && c.path !== '/graphql'),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
