/**
 * A 127.0.0.1 server in front of another (the emulator) that answers some requests itself: for
 * tests of what a client does when one request meets a 429 with a long Retry-After, a slow
 * answer or an error, while every other request is served for real.
 */
import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';

export interface Interception {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface SeenRequest {
  method: string;
  path: string;
  body: string;
}

export interface Forwarder {
  url: string;
  /** Requests answered by `intercept`, in arrival order. */
  intercepted: SeenRequest[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

export const startForwarder = async (
  target: string,
  intercept: (seen: SeenRequest) => Interception | undefined,
): Promise<Forwarder> => {
  const upstream = new URL(target);
  const intercepted: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const seen: SeenRequest = { method: req.method ?? 'GET', path: req.url ?? '/', body };
      const answer = intercept(seen);
      if (answer) {
        intercepted.push(seen);
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(JSON.stringify(answer.body ?? { message: `HTTP ${answer.status}` }));
        return;
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: seen.method,
          path: seen.path,
          headers: { ...req.headers, host: upstream.host },
        },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      forward.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('forwarder has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    intercepted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
