/**
 * The GitHub REST client both GitHub users share (the Action's comments and merges, the drift pull
 * request): `@octokit/rest` at the given API URL, through the proxy from the environment when one
 * applies, and quiet (failures are reported by the caller with the operation named).
 */
import { Octokit } from '@octokit/rest';
import { fetch as undiciFetch } from 'undici';
import { dispatcherFor, type ProxySettings } from './proxy.js';

export interface GitHubClientOptions {
  token: string;
  /** `GITHUB_API_URL`; a trailing slash is dropped. */
  apiUrl: string;
  userAgent: string;
  /** The proxy from the environment (`HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`), as the API client's. */
  proxy?: ProxySettings;
}

export const createOctokit = (options: GitHubClientOptions): Octokit => {
  const baseUrl = options.apiUrl.replace(/\/+$/, '');
  const dispatcher = options.proxy ? dispatcherFor(options.proxy, baseUrl) : undefined;
  return new Octokit({
    auth: options.token,
    baseUrl,
    userAgent: options.userAgent,
    ...(dispatcher
      ? {
          request: {
            // Undici's own fetch: the global one belongs to Node's bundled undici and does not
            // take this package's dispatcher.
            fetch: (url: string, init: Parameters<typeof undiciFetch>[1]) => undiciFetch(url, { ...init, dispatcher }),
          },
        }
      : {}),
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
};
