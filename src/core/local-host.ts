/**
 * Whether an HTTP `Host` header names this machine by address rather than by a DNS name: an IP
 * literal (v4, or v6 in brackets) or `localhost`, with an optional port, in any letter case. A
 * page on another site that rebinds its own DNS name to a loopback or pod address sends that name
 * as `Host`; a server without authentication answers such a request only when it is an address
 * (or a name its operator listed).
 */

/** An IP literal (v4, or v6 in brackets) or `localhost`, with an optional port. */
const ADDRESS_HOST = /^(localhost|\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])(:\d+)?$/i;

/** A DNS name with an optional port, split so that the name can be compared without letter case. */
const NAMED_HOST = /^([a-z0-9](?:[a-z0-9.-]{0,252}))(?::\d+)?$/i;

/**
 * True when `host` is an address or `localhost`, or one of `allowedNames` (compared without letter
 * case or port; a trailing dot is not the same name).
 */
export const isAddressHost = (host: string | undefined, allowedNames: readonly string[] = []): boolean => {
  if (host === undefined) return false;
  if (ADDRESS_HOST.test(host)) return true;
  const name = NAMED_HOST.exec(host)?.[1]?.toLowerCase();
  return name !== undefined && allowedNames.some((allowed) => allowed.toLowerCase() === name);
};
