/**
 * A corporate proxy on 127.0.0.1, for tests of `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY`: it forwards
 * plain requests (`GET http://host/path`) and tunnels `CONNECT host:port`, and logs every request
 * line and header it sees, as a proxy's access log would. With `credentials`, anything without
 * the matching `Proxy-Authorization` gets 407.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface ProxyLogEntry {
  method: string;
  /** The absolute URL of a forwarded request, or `host:port` of a CONNECT. */
  target: string;
  headers: IncomingHttpHeaders;
}

export interface TestProxy {
  url: string;
  port: number;
  log: ProxyLogEntry[];
  /** The log as text, one request line and its header lines per entry. */
  logText(): string;
  stop(): Promise<void>;
}

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

export const startTestProxy = async (
  options: { credentials?: { user: string; password: string } } = {},
): Promise<TestProxy> => {
  const log: ProxyLogEntry[] = [];
  const sockets = new Set<Socket>();
  const expected = options.credentials ? basic(options.credentials.user, options.credentials.password) : undefined;
  const authorized = (headers: IncomingHttpHeaders): boolean =>
    expected === undefined || headers['proxy-authorization'] === expected;

  const server = createServer((req, res) => {
    log.push({ method: req.method ?? '', target: req.url ?? '', headers: req.headers });
    if (!authorized(req.headers)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"', 'content-type': 'text/plain' });
      res.end('Proxy Authentication Required');
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL expected');
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end('bad gateway'));
    req.pipe(upstream);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    log.push({ method: 'CONNECT', target: req.url ?? '', headers: req.headers });
    if (!authorized(req.headers)) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log,
    logText: () =>
      log
        .map((e) =>
          [`${e.method} ${e.target}`, ...Object.entries(e.headers).map(([k, v]) => `${k}: ${String(v)}`)].join('\n'),
        )
        .join('\n\n'),
    /** Idempotent. */
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
