/**
 * Keeping the API key out of everything the tool prints, logs or posts. A server, a proxy or an
 * error page may echo the key whole, in part, in another case, base64-encoded (as in a Basic
 * `Authorization` header) or URL-encoded. `redactSecrets` replaces every run of 8 or more
 * characters that could come from any of those forms with `[REDACTED]`, case-insensitively.
 *
 * A key shorter than 8 characters (a test key, a common word) is replaced only where it stands as
 * a whole token — not next to a letter, digit or `_` — as is, URL-encoded or base64-encoded: as a
 * substring it would eat letters of words ("test" from "latest") and protect nothing, since a
 * short key shows up in a message as a token of its own. (Such a key is no secret worth the
 * name; a run of it inside a longer token is not redacted.)
 */

export const REDACTED = '[REDACTED]';

/** How many characters of the key make a leak. */
export const LEAK_RUN = 8;

const base64 = (text: string, url: boolean): string => {
  const encoded = Buffer.from(text, 'utf8').toString(url ? 'base64url' : 'base64');
  return encoded.replace(/=+$/, '');
};

/**
 * The parts of the base64 encodings of `key` that depend on the key alone, at the three positions
 * it can take inside an encoded value (after 0, 1 or 2 other bytes: `user:key`, `key:`, …).
 */
const base64Forms = (key: string): string[] => {
  const forms: string[] = [];
  for (const url of [false, true]) {
    for (const lead of [0, 1, 2]) {
      const encoded = base64(`${'\0'.repeat(lead)}${key}`, url);
      // Characters touched by the leading bytes, and the last group (touched by what follows).
      const skip = lead === 0 ? 0 : Math.ceil((lead * 4) / 3);
      const keep = encoded.slice(skip, Math.max(skip, encoded.length - 4));
      forms.push(keep);
    }
    forms.push(base64(key, url));
  }
  return forms;
};

/** Every form in which the key may come back. */
export const secretForms = (key: string): string[] => {
  const forms = new Set<string>([key, encodeURIComponent(key), encodeURIComponent(key).replace(/%20/g, '+')]);
  for (const form of base64Forms(key)) forms.add(form);
  return [...forms].filter((f) => f !== '');
};

/** Letters, digits and `_`: what continues a token. */
const WORD = /[\p{L}\p{N}_]/u;
const wordAt = (text: string, index: number): boolean => index >= 0 && index < text.length && WORD.test(text[index]!);

/** Replaces `key`, its URL-encoded and its base64 forms where each stands as a whole token. */
const wholeTokenRedactor = (key: string): Redactor => {
  const forms = [...new Set([key, encodeURIComponent(key), base64(key, false), base64(key, true)])].filter(
    (f) => f !== '',
  );
  return (text) => {
    const marked = new Uint8Array(text.length);
    let any = false;
    for (const form of forms) {
      for (let i = text.indexOf(form); i !== -1; i = text.indexOf(form, i + 1)) {
        if (wordAt(text, i - 1) || wordAt(text, i + form.length)) continue;
        marked.fill(1, i, i + form.length);
        any = true;
      }
    }
    return any ? replaceMarked(text, marked) : text;
  };
};

/** `text` with each run of marked characters replaced by one `[REDACTED]`. */
const replaceMarked = (text: string, marked: Uint8Array): string => {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (marked[i] === 1) {
      while (i < text.length && marked[i] === 1) i++;
      out += REDACTED;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
};

/** A function that redacts one key from text; build it once per key. */
export type Redactor = (text: string) => string;

export const createRedactor = (key: string): Redactor => {
  if (key === '') return (text) => text;
  if (key.length < LEAK_RUN) return wholeTokenRedactor(key);
  const pieces = new Set<string>();
  for (const form of secretForms(key)) {
    const lower = form.toLowerCase();
    for (let i = 0; i + LEAK_RUN <= lower.length; i++) pieces.add(lower.slice(i, i + LEAK_RUN));
  }
  const firstChars = new Set([...pieces].map((p) => p[0]));
  return (text) => {
    if (text.length < LEAK_RUN) return text;
    const lower = text.toLowerCase();
    // Mark every character covered by an 8-character piece of a form of the key.
    let marked: Uint8Array | undefined;
    for (let i = 0; i + LEAK_RUN <= lower.length; i++) {
      if (!firstChars.has(lower[i]) || !pieces.has(lower.slice(i, i + LEAK_RUN))) continue;
      marked ??= new Uint8Array(text.length);
      marked.fill(1, i, i + LEAK_RUN);
    }
    return marked ? replaceMarked(text, marked) : text;
  };
};

/**
 * `text` with every run of 8 or more characters of `key` (any case), of its base64 forms and of
 * its URL-encoded form replaced by `[REDACTED]`. For PR comments, metrics labels, logs: anything
 * that may carry text a server sent back. Redacting much text with one key: `createRedactor`.
 */
export const redactSecrets = (text: string, key: string | undefined): string => {
  if (key === undefined || key === '') return text;
  return createRedactor(key)(text);
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Deep copy of a parsed JSON value with every string (keys included) redacted. */
export const redactDeep = (value: unknown, redact: Redactor): unknown => {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redact(k)] = redactDeep(v, redact);
    return out;
  }
  return value;
};
