/**
 * A small fake of the Kubernetes Lease API on 127.0.0.1, for the real `@kubernetes/client-node`:
 * GET, POST and PUT of `/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}` (POST on the
 * collection), `resourceVersion` bumped on every write and checked on PUT (409 when it differs),
 * 404 / 409 as `Status` objects. Every request is logged with the bearer token it came with (each
 * process gets its own kubeconfig and token), and requests of a token can be made to hang.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LeaseRequest {
  method: string;
  path: string;
  token: string;
  status: number;
  at: number;
  holder?: string;
}

interface StoredLease {
  metadata: { name: string; namespace: string; resourceVersion: string; [key: string]: unknown };
  spec: { holderIdentity?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface FakeLeaseApi {
  url: string;
  requests: LeaseRequest[];
  lease(namespace: string, name: string): StoredLease | undefined;
  /** Requests with this token are held unanswered until `unstall`. */
  stall(token: string): void;
  unstall(token: string): void;
  /** Writes a kubeconfig for `token` at `file`. */
  kubeconfig(file: string, token: string, namespace?: string): Promise<void>;
  stop(): Promise<void>;
}

const PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?$/;

const status = (res: ServerResponse, code: number, reason: string, message: string) => {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }));
};

const readJson = async (req: IncomingMessage): Promise<StoredLease> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as StoredLease;
};

export const startFakeLeaseApi = async (): Promise<FakeLeaseApi> => {
  const leases = new Map<string, StoredLease>();
  const requests: LeaseRequest[] = [];
  const stalled = new Set<string>();
  const held: (() => void)[] = [];
  let version = 100;

  const handle = async (req: IncomingMessage, res: ServerResponse, entry: LeaseRequest) => {
    const match = PATH.exec((req.url ?? '').split('?')[0] ?? '');
    if (!match) return status(res, 404, 'NotFound', 'no such path');
    const namespace = decodeURIComponent(match[1] ?? '');
    const name = match[2] ? decodeURIComponent(match[2]) : undefined;
    const key = `${namespace}/${name ?? ''}`;
    if (req.method === 'GET' && name) {
      const found = leases.get(key);
      if (!found) return status(res, 404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(found));
    }
    if (req.method === 'POST' && !name) {
      const body = await readJson(req);
      const created = `${namespace}/${body.metadata.name}`;
      if (leases.has(created))
        return status(res, 409, 'AlreadyExists', `leases "${body.metadata.name}" already exists`);
      version += 1;
      const stored = { ...body, metadata: { ...body.metadata, namespace, resourceVersion: String(version) } };
      leases.set(created, stored);
      entry.holder = stored.spec.holderIdentity ?? '';
      res.writeHead(201, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(stored));
    }
    if (req.method === 'PUT' && name) {
      const body = await readJson(req);
      const current = leases.get(key);
      if (!current) return status(res, 404, 'NotFound', `leases "${name}" not found`);
      if (body.metadata.resourceVersion !== current.metadata.resourceVersion)
        return status(
          res,
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version',
        );
      version += 1;
      const stored = { ...body, metadata: { ...body.metadata, namespace, resourceVersion: String(version) } };
      leases.set(key, stored);
      entry.holder = stored.spec.holderIdentity ?? '';
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(stored));
    }
    return status(res, 405, 'MethodNotAllowed', 'not supported by the fake');
  };

  const server = createServer((req, res) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const entry: LeaseRequest = { method: req.method ?? '', path: req.url ?? '', token, status: 0, at: Date.now() };
    const go = () => {
      res.on('finish', () => {
        entry.status = res.statusCode;
        requests.push(entry);
      });
      handle(req, res, entry).catch(() => status(res, 500, 'InternalError', 'fake failed'));
    };
    if (stalled.has(token)) held.push(go);
    else go();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    lease: (namespace, name) => leases.get(`${namespace}/${name}`),
    stall: (token) => stalled.add(token),
    unstall: (token) => {
      stalled.delete(token);
      for (const go of held.splice(0)) go();
    },
    kubeconfig: (file, token, namespace = 'default') =>
      writeFile(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'fake', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'u', user: { token } }],
          contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u', namespace } }],
          'current-context': 'fake',
        }),
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
