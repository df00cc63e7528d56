/**
 * The tool search query language:
 *
 * - `select:a,b` fetches tools by exact name (whitespace around names is
 *   ignored; a name is matched case-insensitively only when no tool has it
 *   exactly).
 * - `+term` requires `term` in the tool's name: it must be the start of one of
 *   the name's words, the name being split like any identifier (`_`, `__`,
 *   `-`, `.`, camelCase, digits). So `+git` matches `github_create_issue` but
 *   not `digit_sum`. Prefix rather than whole-word matching because models
 *   often abbreviate a service name.
 * - Everything else is keywords, ranked.
 */

/** A query, read. */
export type ParsedQuery =
  | { readonly kind: 'invalid'; readonly error: string }
  | { readonly kind: 'select'; readonly names: readonly string[] }
  | {
      readonly kind: 'keywords';
      /** The query without its `+term` words, trimmed. */
      readonly text: string;
      /** The `+term` words without the `+`, in order, duplicates removed. */
      readonly required: readonly string[];
    };

const SELECT_PREFIX = /^select:/i;

/** Explains an empty query; shown to the model as is. */
const EMPTY_QUERY_ERROR =
  'The query is empty. Search with keywords (for example "slack send message"), require a word in the ' +
  'tool name with +word, or load tools by exact name with select:name1,name2.';

const EMPTY_SELECT_ERROR = 'select: needs at least one tool name, for example select:name1,name2 (names separated by commas).';

/** Reads a query string. Never throws: a query that cannot be run is `invalid`. */
export function parseQuery(query: string): ParsedQuery {
  const trimmed = query.trim();
  if (trimmed === '') return { kind: 'invalid', error: EMPTY_QUERY_ERROR };

  if (SELECT_PREFIX.test(trimmed)) {
    const names = unique(
      trimmed
        .slice('select:'.length)
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== ''),
    );
    return names.length === 0 ? { kind: 'invalid', error: EMPTY_SELECT_ERROR } : { kind: 'select', names };
  }

  const required: string[] = [];
  const words: string[] = [];
  for (const word of trimmed.split(/\s+/)) {
    // A lone "+" is punctuation, not a requirement.
    if (word.length > 1 && word.startsWith('+')) required.push(word.slice(1));
    else words.push(word);
  }
  return { kind: 'keywords', text: words.join(' '), required: unique(required) };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
