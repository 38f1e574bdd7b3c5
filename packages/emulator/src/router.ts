/**
 * Matches a raw (still percent-encoded) request path against route patterns. Each `:param` matches
 * one encoded segment and is decoded after matching, so a tag like `a/b` sent as `a%2Fb` stays one
 * segment. When several patterns match, the one with literal segments earliest wins
 * (`/catalog/dependencies` beats `/catalog/:tagOrId`).
 */
import type { EmulatorMethod, RouteDef } from './contract.js';

type Segment = { literal: string } | { param: string };

export interface CompiledRoute<S> {
  def: RouteDef<S>;
  segments: Segment[];
}

export type RouteMatch<S> =
  | { kind: 'found'; route: RouteDef<S>; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: EmulatorMethod[] }
  | { kind: 'bad-encoding' }
  | { kind: 'not-found' };

const splitPath = (path: string): string[] => {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
};

/** Compiles patterns once. */
export const compileRoutes = <S>(routes: readonly RouteDef<S>[]): CompiledRoute<S>[] =>
  routes.map((def) => ({
    def,
    segments: splitPath(def.pattern).map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s })),
  }));

const matches = (segments: Segment[], raw: string[]): boolean =>
  segments.length === raw.length && segments.every((s, i) => !('literal' in s) || s.literal === raw[i]);

/** Literal segments earlier in the path rank higher. */
const moreSpecific = (a: Segment[], b: Segment[]): boolean => {
  for (let i = 0; i < a.length; i++) {
    const la = 'literal' in (a[i] ?? {});
    const lb = 'literal' in (b[i] ?? {});
    if (la !== lb) return la;
  }
  return false;
};

/** Finds the route for a method and raw path (no query). */
export const matchRoute = <S>(routes: readonly CompiledRoute<S>[], method: string, rawPath: string): RouteMatch<S> => {
  const raw = splitPath(rawPath);
  const candidates = routes.filter((r) => matches(r.segments, raw));
  if (candidates.length === 0) return { kind: 'not-found' };
  let best: CompiledRoute<S> | undefined;
  for (const c of candidates) {
    if (c.def.method !== method) continue;
    if (!best || moreSpecific(c.segments, best.segments)) best = c;
  }
  if (!best) return { kind: 'method-not-allowed', allowed: [...new Set(candidates.map((c) => c.def.method))] };
  const params: Record<string, string> = {};
  try {
    best.segments.forEach((s, i) => {
      if ('param' in s) params[s.param] = decodeURIComponent(raw[i] ?? '');
    });
  } catch {
    return { kind: 'bad-encoding' };
  }
  return { kind: 'found', route: best.def, params };
};
