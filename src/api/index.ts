/** The HTTP adapter and the `ApiClient` port. */
export { type AdaptiveRate, type AdaptiveRateOptions, afterRateLimited, initialRate, rateAt } from './adaptive-rate.js';
export { type ApiClientOptions, createApiClient } from './client.js';
export {
  type ExtractedApiMessage,
  extractApiMessage,
  MAX_REQUEST_BODY_BYTES,
  DotSegmentPathError,
  RequestTooLargeError,
  redactText,
  redactValue,
} from './errors.js';
export { DEFAULT_PAGE_SIZE, paginateWith } from './paginate.js';
export { RateLimiter, type RateLimiterOptions } from './rate-limiter.js';
export { createRedactor, LEAK_RUN, REDACTED, type Redactor, redactDeep, redactSecrets, secretForms } from './redact.js';
export { DEFAULT_BASE_URL, normalizeBaseUrl, pathWithQuery } from './request-parts.js';
export {
  type AttemptErrorKind,
  isIdempotentByDefault,
  parseRetryAfterMs,
  type RetryQuestion,
  retryDelayMs,
  shouldRetry,
} from './retry-policy.js';
export * from './types.js';
