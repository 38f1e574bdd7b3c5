/**
 * The parser's guards against hostile or accidental huge inputs, in a module of their own: the
 * runtimes read a manifest's text under the same size limit without loading the YAML parsers.
 */
export interface ParseLimits {
  /** Files larger than this many bytes are rejected unread by the parser. Default 1 MiB. */
  maxFileBytes: number;
  /** Upper bound of alias expansion (the `yaml` package's `maxAliasCount`); stops "billion laughs". Default 100. */
  maxAliasCount: number;
  /**
   * Mappings and lists nested deeper than this are an error naming the place (a manifest needs a
   * few dozen levels at most; far deeper, the YAML parser itself would run out of stack). Default 100.
   */
  maxDepth: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxFileBytes: 1024 * 1024, maxAliasCount: 100, maxDepth: 100 };
