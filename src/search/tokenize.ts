/**
 * Tokenizers shared by indexing and querying. Both sides must normalize words
 * the same way, so every term that reaches the index or a query is made here.
 */

/**
 * English function words that carry no signal about what a tool does. Kept to
 * the usual short list: a longer, domain-specific list (e.g. "get", "data")
 * would stop `+get` or "data export" from working.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she should ' +
    'so some such than that the their theirs them themselves then there these they this those through to ' +
    'too under until up very was we were what when where which while who whom why will with would you ' +
    'your yours yourself yourselves'
  ).split(' '),
);

/**
 * Whether a lowercased word is dropped from indexing and queries: a stop word
 * or a single Latin letter (the e and g of "e.g.", the s of "user's"). Single
 * characters of other scripts are words (猫).
 */
function isStopWord(word: string): boolean {
  return (word.length === 1 && isLowercaseAsciiLetter(word.charCodeAt(0))) || STOP_WORDS.has(word);
}

function isLowercaseAsciiLetter(code: number): boolean {
  return code >= 97 && code <= 122;
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII_TEXT = /^[\x00-\x7f]*$/;
// In ASCII text, words are runs of letters and digits; everything else
// (spaces, punctuation, the `_`, `__`, `-`, `.` of tool names) separates them.
const ASCII_WORDS = /[A-Za-z0-9]+/g;
const ASCII_WORD = /^[A-Za-z0-9]+$/;
// Any other text: letters (any script), combining marks and digits make words.
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;
// A case change inside a word: getUser, getHTTPResponse, base64Encode.
const CASE_CHANGE = /[a-z0-9][A-Z]|[A-Z][A-Z][a-z]/;
// One camelCase part: an acronym not followed by a lowercase letter (HTTP in
// getHTTPResponse), a capitalised or lowercase word, or a run of digits.
// Digits stay with the letters before them: s3, oauth2, base64 and srv1
// remain one word each.
const CAMEL_PART = /[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+/g;

/**
 * Folds English plurals so "issues" finds `create_issue` and "repositories"
 * finds `get_repository`. Deliberately light (no -ing/-ed stripping): measured
 * on Seal-Tools, heavier stemming did not help and it makes `+term` surprising.
 */
export function foldPlural(word: string): string {
  const n = word.length;
  if (n <= 3 || word.charCodeAt(n - 1) !== 115 /* s */) return word;
  if (n > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses') || word.endsWith('xes') || word.endsWith('zes') || word.endsWith('ches') || word.endsWith('shes')) {
    return word.slice(0, -2);
  }
  // "status", "analysis", "access": a final s that is not a plural.
  if (word.endsWith('ss') || word.endsWith('us') || word.endsWith('is')) return word;
  return word.slice(0, -1);
}

/** Lowercases, drops stop words (unless kept) and folds plurals; `undefined` when dropped. */
function normalizeWord(word: string, keepStopWords = false): string | undefined {
  const lower = word.toLowerCase();
  return !keepStopWords && isStopWord(lower) ? undefined : foldPlural(lower);
}

/**
 * Splits an identifier or a piece of text into normalized terms.
 *
 * Words are split on case changes and also kept whole, lowercased:
 * `getHTTPResponse` -> get, http, response, gethttpresponse. The whole form
 * is what makes "github" find a description saying "GitHub" (git, hub,
 * github) and "youtube" find "YouTube". Separators split words:
 * `github.create-issue` -> github, create, issue; `srv1__list_files` -> srv1,
 * list, file. Text in other scripts is split on non-letters and lowercased.
 * Stop words are removed unless `keepStopWords` is set, which tool names use
 * so that `+to` can still find `convert_to_pdf`.
 */
export function tokenize(text: string, keepStopWords = false): string[] {
  const terms: string[] = [];
  if (ASCII_TEXT.test(text)) {
    // Fast path: most tool text is ASCII, and one native match finds its words.
    const words = text.match(ASCII_WORDS);
    if (words === null) return terms;
    // Most sentences have no camelCase word: then skip the per-word test.
    if (CASE_CHANGE.test(text)) for (const word of words) pushAsciiWord(terms, word, keepStopWords);
    else for (const word of words) pushNormalized(terms, word, keepStopWords);
    return terms;
  }
  // Composed form, so "é" typed as e + combining accent matches "é".
  for (const word of text.normalize('NFC').split(SEPARATORS)) {
    if (word === '') continue;
    if (ASCII_WORD.test(word)) pushAsciiWord(terms, word, keepStopWords);
    else pushNormalized(terms, word, keepStopWords);
  }
  return terms;
}

function pushAsciiWord(terms: string[], word: string, keepStopWords: boolean): void {
  if (CASE_CHANGE.test(word)) {
    for (const part of word.match(CAMEL_PART) ?? []) pushNormalized(terms, part, keepStopWords);
  }
  pushNormalized(terms, word, keepStopWords);
}

/**
 * The ways a `+term` can match a name, each a list of words that must all
 * start a word of the name. Two at most: the term's words as written
 * (`+GitHub` -> github, `+mergeRequest` -> mergerequest, which the name's
 * whole-word form matches), and, when a word has case changes, its camelCase
 * parts (`+HTTPResponse` -> http, response, for `getHTTPResponse`). Stop
 * words are kept; plurals are folded.
 */
export function requiredWordSets(term: string): string[][] {
  const whole: string[] = [];
  const parts: string[] = [];
  let split = false;
  for (const word of term.split(SEPARATORS)) {
    if (word === '') continue;
    const normalized = normalizeWord(word, true);
    if (normalized !== undefined) whole.push(normalized);
    if (ASCII_WORD.test(word) && CASE_CHANGE.test(word)) {
      split = true;
      for (const part of word.match(CAMEL_PART) ?? []) pushNormalized(parts, part, true);
    } else if (normalized !== undefined) {
      parts.push(normalized);
    }
  }
  if (whole.length === 0) return [];
  return split ? [whole, parts] : [whole];
}

function pushNormalized(terms: string[], word: string, keepStopWords: boolean): void {
  const term = normalizeWord(word, keepStopWords);
  if (term !== undefined) terms.push(term);
}
