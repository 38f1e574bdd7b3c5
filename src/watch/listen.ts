/**
 * The watcher's listen address: `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` (every interface). The
 * default is loopback: the endpoints have no authentication, so reaching them from elsewhere is
 * the operator's explicit choice (`--listen 0.0.0.0:8080`, as the container image sets it).
 */

export const DEFAULT_LISTEN = '127.0.0.1:8080';

interface ListenAddress {
  host: string;
  port: number;
}

export class ListenSyntaxError extends Error {
  constructor(value: string, why: string) {
    super(
      `${why}: expected HOST:PORT such as 127.0.0.1:8080, 0.0.0.0:8080 (every interface) or [::1]:8080, got '${value}'`,
    );
    this.name = 'ListenSyntaxError';
  }
}

const HOSTNAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$/;

/** Parses a listen address; throws `ListenSyntaxError` saying what is wrong with it. */
export const parseListen = (value: string): ListenAddress => {
  const text = value.trim();
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(text);
  if (!match) {
    const why = /^\d+$/.test(text)
      ? 'no host'
      : text.split(':').length > 2
        ? 'an IPv6 address needs brackets'
        : 'not an address';
    throw new ListenSyntaxError(value, why);
  }
  const [, v6, name, portText = ''] = match;
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new ListenSyntaxError(value, `the port '${portText}' is not a number from 0 to 65535`);
  }
  if (v6 !== undefined && !/^[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?$/.test(v6)) {
    throw new ListenSyntaxError(value, `'${v6}' is not an IPv6 address`);
  }
  if (name !== undefined && name !== '' && !HOSTNAME.test(name)) {
    throw new ListenSyntaxError(value, `'${name}' is not a host name or address`);
  }
  return { host: v6 ?? (name || '0.0.0.0'), port: Number(portText) };
};

/** Where a local probe reaches a server listening on `address` (the wildcard addresses → loopback). */
export const probeUrl = (address: ListenAddress, path: string): string => {
  const host =
    address.host === '0.0.0.0' ? '127.0.0.1' : address.host === '::' || address.host === '::0' ? '::1' : address.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}${path}`;
};
