/**
 * Runs before every test file: tests never reach the internet. Every TCP connection (undici's
 * Agents, `fetch`, node:http, TLS: all of them go through `net.Socket.prototype.connect`) to a
 * host that is not loopback fails before a packet is sent. IPC paths (unix sockets) are allowed.
 * `test/support/no-network.test.ts` proves it for each way the product sends requests.
 *
 * Not nock: nock 15.0.2 needs @mswjs/interceptors 0.44, which declares Node ≥ 22 (npm ci warns
 * EBADENGINE on Node 20), and nock 15.0.0 does not see a request sent through an undici Agent
 * of its own, which is how the API client sends every request.
 */
import net from 'node:net';

const LOOPBACK = /^(127(?:\.\d{1,3}){3}|localhost|::1|\[::1\]|::ffff:127(?:\.\d{1,3}){3})$/i;

type ConnectArgs = Parameters<net.Socket['connect']>;

/** The host a `connect` call targets, or undefined for an IPC path (a unix socket). */
const targetHost = (args: unknown[]): string | undefined => {
  // net.connect() passes its normalized arguments as one array: [options, callback].
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  if (typeof first === 'object' && first !== null) {
    const options = first as { path?: unknown; host?: string | null };
    return typeof options.path === 'string' ? undefined : (options.host ?? 'localhost');
  }
  if (typeof first === 'string' && Number.isNaN(Number(first))) return undefined; // connect(path)
  return typeof second === 'string' ? second : 'localhost';
};

// eslint-disable-next-line @typescript-eslint/unbound-method -- called with apply(this) below
const originalConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: ConnectArgs): net.Socket {
  const host = targetHost(args);
  if (host !== undefined && !LOOPBACK.test(host)) {
    const error = Object.assign(new Error(`Disallowed net connect to ${host}: tests never reach the internet`), {
      code: 'ENETUNREACH',
    });
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return originalConnect.apply(this, args);
} as net.Socket['connect'];
