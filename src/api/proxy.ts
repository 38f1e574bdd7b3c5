/**
 * A corporate proxy from the environment, as curl and most tools read it: `HTTPS_PROXY` for https
 * targets (else `HTTP_PROXY`), `HTTP_PROXY` for http ones, hosts in `NO_PROXY` (`host`,
 * `host:port`, `.domain`, `*.domain`, `*`) sent directly; the lower-case names win, as in curl.
 * The dispatcher is undici's `EnvHttpProxyAgent`, given these values (it never reads
 * `process.env` itself). An http target is forwarded (`GET http://…`, as proxies expect for
 * plain http); an https one goes through a `CONNECT` tunnel, so the proxy sees only the host.
 *
 * One rule of our own: a loopback target (an emulator, a local tunnel) never goes to a proxy
 * that is not itself on loopback — that proxy's 127.0.0.1 is another machine, and plain http to
 * it would carry the key across the network.
 */
import { Agent, type Dispatcher, EnvHttpProxyAgent } from 'undici';

/** One proxy and the variable it came from (for messages; its URL may hold credentials: never print it). */
interface ProxyChoice {
  url: string;
  from: string;
}

export interface ProxySettings {
  http?: ProxyChoice;
  https?: ProxyChoice;
  /** The `NO_PROXY` list as given ('' when not set). */
  noProxy: string;
}

const first = (env: NodeJS.ProcessEnv, names: readonly string[]): ProxyChoice | undefined => {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { url: value, from: name };
  }
  return undefined;
};

/** A proxy URL's problem, never quoting it (it may hold a password). */
const problemOf = (choice: ProxyChoice): string | undefined => {
  let url: URL;
  try {
    url = new URL(choice.url);
  } catch {
    return `${choice.from}: not a valid proxy URL (expected http://host:port, credentials as http://user:password@host:port)`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `${choice.from}: a proxy URL must start with http:// or https://, not ${url.protocol}`;
  return undefined;
};

/** The proxy settings of an environment (undefined: no proxy), and the problems of bad values. */
export const proxySettingsFrom = (env: NodeJS.ProcessEnv): { settings?: ProxySettings; problems: string[] } => {
  const http = first(env, ['http_proxy', 'HTTP_PROXY']);
  const https = first(env, ['https_proxy', 'HTTPS_PROXY']) ?? http;
  const noProxy = first(env, ['no_proxy', 'NO_PROXY'])?.url ?? '';
  const problems = [...new Set([http, https].filter((c) => c !== undefined).map(problemOf))].filter(
    (p): p is string => p !== undefined,
  );
  if (problems.length > 0 || (http === undefined && https === undefined)) return { problems };
  return { settings: { ...(http ? { http } : {}), ...(https ? { https } : {}), noProxy }, problems };
};

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;
const isLoopback = (url: string): boolean => LOOPBACK.test(new URL(url).hostname);

/** Whether `NO_PROXY` sends `target` direct, as undici's `EnvHttpProxyAgent` judges it (for messages). */
const bypassed = (noProxy: string, target: URL): boolean => {
  if (noProxy.trim() === '*') return true;
  const host = target.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  return noProxy
    .split(/[,\s]/)
    .filter((entry) => entry !== '')
    .some((entry) => {
      const parsed = /^(.+):(\d+)$/.exec(entry);
      const name = (parsed ? parsed[1]! : entry).replace(/^\*?\./, '').toLowerCase();
      if (parsed && Number(parsed[2]) !== port) return false;
      return host === name || host.endsWith(`.${name}`);
    });
};

/** The proxy a request to `target` goes to (undefined: none, or `NO_PROXY` sends it direct). */
export const proxyOf = (settings: ProxySettings | undefined, target: string): ProxyChoice | undefined => {
  if (!settings) return undefined;
  const url = new URL(target);
  const choice = url.protocol === 'https:' ? settings.https : settings.http;
  if (!choice) return undefined;
  if (isLoopback(target) && !isLoopback(choice.url)) return undefined;
  if (bypassed(settings.noProxy, url)) return undefined;
  return choice;
};

/**
 * The dispatcher for requests to `target` (one origin per client): an `EnvHttpProxyAgent` when a
 * proxy applies, else a plain `Agent`. `agent`: the pool options either way.
 */
export const dispatcherFor = (
  settings: ProxySettings | undefined,
  target: string,
  agent: Agent.Options = {},
): Dispatcher => {
  const choice = proxyOf(settings, target);
  if (!settings || !choice) return new Agent(agent);
  const https = new URL(target).protocol === 'https:';
  // NO_PROXY is applied here already; the agent is still given it, so both judge alike.
  return new EnvHttpProxyAgent({
    ...agent,
    httpProxy: https ? '' : choice.url,
    httpsProxy: https ? choice.url : '',
    noProxy: settings.noProxy,
    // Plain http is forwarded, as proxies expect (many allow CONNECT only to port 443).
    proxyTunnel: false,
  });
};

/** Undici's errors for a proxy's 407 (forwarded, or refusing a CONNECT). */
export const isProxyAuthError = (error: unknown): boolean =>
  error instanceof Error && /Proxy Authentication Required \(407\)|Proxy response \(407\)/.test(error.message);
