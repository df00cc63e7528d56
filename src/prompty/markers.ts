/**
 * Line-level syntax of a Prompty body: role markers (`user[name="Ann"]:`), the `![thread]` line,
 * attribute lists and media links (`![image](url)`, `![type="image", detail="high"](url)`).
 *
 * These functions work on raw text; render.ts decides which occurrences are real (they must come
 * from the template, not from interpolated input).
 */

/** Section keywords accepted before `:` (case-insensitive). */
type MarkerKeyword = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function' | 'thread' | 'tools';

/** A parsed marker line. `![thread]` parses as keyword `thread` with no attributes. */
export interface ParsedMarker {
  keyword: MarkerKeyword;
  /** Attributes in written order (duplicates are rejected). */
  attributes: Array<[string, string]>;
}

// Prompty's own parser takes a role line written as a markdown heading too (`# system:`); `thread:` is ours
// and keeps to the plain form.
const MARKER_RE = /^[ \t]*(?:(?:#[ \t]*)?(system|developer|user|assistant|tool|function|tools)|(thread))[ \t]*(?:\[(.*)\])?[ \t]*:[ \t]*$/i;
const THREAD_LINE_RE = /^[ \t]*!\[thread\][ \t]*$/i;
const KEY_RE = /[A-Za-z_][\w.-]*/y;
const BARE_RE = /[^\s,"'\]]+/y;

/** The result of parsing an attribute list. */
export type AttributeParse = { ok: true; attributes: Array<[string, string]> } | { ok: false; error: string };

function readQuoted(src: string, at: number): { value: string; end: number } | null {
  const quote = src[at];
  let value = '';
  let i = at + 1;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\\' && i + 1 < src.length) {
      const next = src[i + 1] as string;
      // Only quote characters and the backslash are escapes; anything else is kept as written.
      value += next === '"' || next === "'" || next === '\\' ? next : c + next;
      i += 2;
      continue;
    }
    if (c === quote) return { value, end: i + 1 };
    value += c;
    i += 1;
  }
  return null;
}

/**
 * Parses `key="value", other='v', bare=value` (the text between `[` and `]`). Quoted values may hold
 * commas, brackets and escaped quotes (`\"`).
 */
export function parseAttributes(src: string): AttributeParse {
  const attributes: Array<[string, string]> = [];
  const seen = new Set<string>();
  let i = 0;
  const skipWs = (): void => {
    while (i < src.length && /\s/.test(src[i] as string)) i += 1;
  };
  skipWs();
  while (i < src.length) {
    KEY_RE.lastIndex = i;
    const key = KEY_RE.exec(src);
    if (!key) return { ok: false, error: `expected an attribute name at "${src.slice(i, i + 20)}"` };
    i = KEY_RE.lastIndex;
    skipWs();
    if (src[i] !== '=') return { ok: false, error: `expected "=" after attribute "${key[0]}"` };
    i += 1;
    skipWs();
    let value: string;
    if (src[i] === '"' || src[i] === "'") {
      const q = readQuoted(src, i);
      if (!q) return { ok: false, error: `unterminated quoted value for attribute "${key[0]}"` };
      value = q.value;
      i = q.end;
    } else {
      BARE_RE.lastIndex = i;
      const bare = BARE_RE.exec(src);
      if (!bare) return { ok: false, error: `missing value for attribute "${key[0]}"` };
      value = bare[0];
      i = BARE_RE.lastIndex;
    }
    if (seen.has(key[0])) return { ok: false, error: `duplicate attribute "${key[0]}"` };
    seen.add(key[0]);
    attributes.push([key[0], value]);
    skipWs();
    if (i < src.length) {
      if (src[i] !== ',') return { ok: false, error: `expected "," after attribute "${key[0]}"` };
      i += 1;
      skipWs();
      if (i >= src.length) return { ok: false, error: 'trailing ","' };
    }
  }
  return { ok: true, attributes };
}

/** The result of parsing one line as a marker: not a marker, a marker, or a malformed marker. */
export type MarkerParse = { kind: 'none' } | { kind: 'marker'; marker: ParsedMarker } | { kind: 'error'; error: string };

/** Parses a whole line as a role/section marker or an `![thread]` line. */
export function parseMarkerLine(line: string): MarkerParse {
  if (THREAD_LINE_RE.test(line)) return { kind: 'marker', marker: { keyword: 'thread', attributes: [] } };
  const m = MARKER_RE.exec(line);
  if (!m) return { kind: 'none' };
  const keyword = (m[1] ?? m[2] ?? '').toLowerCase() as MarkerKeyword;
  if (m[3] === undefined) return { kind: 'marker', marker: { keyword, attributes: [] } };
  const attrs = parseAttributes(m[3]);
  if (!attrs.ok) return { kind: 'error', error: `malformed attributes on "${keyword}" marker: ${attrs.error}` };
  return { kind: 'marker', marker: { keyword, attributes: attrs.attributes } };
}

/** A media link found in a line of text. */
export interface MediaLink {
  /** Offset of `!` in the line. */
  start: number;
  /** Offset just after `)`. */
  end: number;
  /** The bracket content when it is not an attribute list (`image`, `file`, alt text). */
  label?: string;
  /** The bracket content when it is an attribute list. */
  attributes?: Array<[string, string]>;
  /** The URL as written (trimmed). */
  url: string;
}

/** Finds the end of a `[...]` starting at `open`, skipping quoted strings. */
function closeBracket(line: string, open: number): number {
  let i = open + 1;
  while (i < line.length) {
    const c = line[i];
    if (c === '"' || c === "'") {
      const q = readQuoted(line, i);
      if (!q) return -1;
      i = q.end;
      continue;
    }
    if (c === ']') return i;
    i += 1;
  }
  return -1;
}

/** Finds the media links `![...](url)` in one line of text, left to right. */
export function findMediaLinks(line: string): MediaLink[] {
  const links: MediaLink[] = [];
  let from = 0;
  for (;;) {
    const start = line.indexOf('![', from);
    if (start === -1) break;
    const close = closeBracket(line, start + 1);
    if (close === -1 || line[close + 1] !== '(') {
      from = start + 2;
      continue;
    }
    const urlEnd = line.indexOf(')', close + 2);
    if (urlEnd === -1) {
      from = start + 2;
      continue;
    }
    const content = line.slice(start + 2, close);
    const url = line.slice(close + 2, urlEnd).trim();
    if (url === '') {
      from = urlEnd + 1;
      continue;
    }
    const link: MediaLink = { start, end: urlEnd + 1, url };
    const attrs = content.includes('=') ? parseAttributes(content) : null;
    if (attrs?.ok) link.attributes = attrs.attributes;
    else link.label = content.trim();
    links.push(link);
    from = urlEnd + 1;
  }
  return links;
}
