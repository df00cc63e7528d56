/**
 * Serializes a sub-prompt's outcome into the single string returned to the calling model as the
 * tool result (spec/prompts.md §3.3). The spec leaves the format open; agentport's format is
 * documented in docs/subprompt-results.md and pinned by golden files in
 * test/fixtures/subprompt-results/.
 *
 * Layout (parts in this order, separated by one blank line, each only when its flag is on and it
 * has content):
 * - the text response, verbatim and without a header;
 * - `Tool calls:` with one numbered entry per call, `N. name(arguments)`, then the outcome at
 *   column 3 (`-> success: ...` / `-> error: ...`); multi-line content sits at column 6;
 * - `Errors:` with one `- ` line per run-level error, continuation lines at column 2.
 * Structure lines never start with a space and content lines always do, so a tool result that
 * contains `Errors:` or `2. x()` cannot be mistaken for a header or an entry.
 */

interface SubpromptToolCallRecord {
  name: string;
  /** Raw JSON text of the arguments as the model sent them. */
  arguments: string;
  status: 'success' | 'error';
  /** The tool's result, read when `status` is `'success'`. */
  result?: string;
  /** The failure message, read when `status` is `'error'`. */
  error?: string;
}

export interface SubpromptOutcome {
  /** The sub-prompt's name. */
  prompt: string;
  /** Final text response; null when the run ended without one. */
  text: string | null;
  /** Every tool call the sub-prompt made, failed ones included, in call order. */
  toolCalls: SubpromptToolCallRecord[];
  /** Run-level errors (model failure, step limit, a required tool call never made), not failed tool calls. */
  errors: string[];
}

/** Which parts of the outcome reach the caller. Each flag defaults to true. */
export interface SubpromptResultFlags {
  includeTextResponse?: boolean;
  includeToolCalls?: boolean;
  includeErrors?: boolean;
}

/** Indentation of a tool call's outcome line. */
const OUTCOME_INDENT = '   ';
/** Indentation of multi-line content (results, errors, arguments) inside a tool call entry. */
const CONTENT_INDENT = '      ';
/** Indentation of an error's continuation lines (aligned with the text after `- `). */
const BULLET_INDENT = '  ';

/**
 * Formats a sub-prompt's outcome as one string for the calling model. Never returns the empty
 * string (some providers reject empty tool results): when no part is shown the result is
 * `(prompt "<name>" returned no text)`, or `(prompt "<name>" ran; its output is not included)`
 * when `includeTextResponse` is false.
 */
export function formatSubpromptResult(outcome: SubpromptOutcome, flags: SubpromptResultFlags = {}): string {
  const parts: string[] = [];

  if (flags.includeTextResponse !== false) {
    const text = outcome.text === null ? '' : tidy(outcome.text);
    if (text) parts.push(text);
  }

  if (flags.includeToolCalls !== false && outcome.toolCalls.length > 0) {
    const entries = outcome.toolCalls.map((call, i) => formatToolCall(call, i + 1));
    parts.push(['Tool calls:', ...entries].join('\n'));
  }

  if (flags.includeErrors !== false && outcome.errors.length > 0) {
    const bullets = outcome.errors.map((error) => `- ${hangingIndent(tidy(error) || '(no message)', BULLET_INDENT)}`);
    parts.push(['Errors:', ...bullets].join('\n'));
  }

  if (parts.length > 0) return parts.join('\n\n');
  const name = JSON.stringify(outcome.prompt);
  return flags.includeTextResponse === false ? `(prompt ${name} ran; its output is not included)` : `(prompt ${name} returned no text)`;
}

function formatToolCall(call: SubpromptToolCallRecord, index: number): string {
  const args = hangingIndent(compactArguments(call.arguments), CONTENT_INDENT);
  const head = `${index}. ${call.name}(${args})`;
  const [label, content] = call.status === 'success' ? ['success', call.result] : ['error', call.error];
  const body = tidy(content ?? '');
  let outcomeLines: string;
  if (!body) {
    outcomeLines = `${OUTCOME_INDENT}-> ${label} (${call.status === 'success' ? 'no result' : 'no message'})`;
  } else if (body.includes('\n')) {
    // A block keeps the content's own relative indentation intact.
    outcomeLines = `${OUTCOME_INDENT}-> ${label}:\n${indentLines(body, CONTENT_INDENT)}`;
  } else {
    outcomeLines = `${OUTCOME_INDENT}-> ${label}: ${body}`;
  }
  return `${head}\n${outcomeLines}`;
}

/**
 * Valid JSON loses its insignificant whitespace and nothing else: re-serializing with
 * JSON.stringify would also rewrite numbers (`1.0` -> `1`, precision of big integers), so the text
 * shown would no longer be what the model sent. Invalid JSON is kept as sent, trimmed.
 */
function compactArguments(raw: string): string {
  const text = tidy(raw).trim();
  try {
    JSON.parse(text);
  } catch {
    return text;
  }
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') {
      out += ch;
    }
  }
  return out;
}

/** Unifies line endings and drops leading blank lines and trailing whitespace. */
function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/^(?:[ \t]*\n)+/, '')
    .trimEnd();
}

/** Indents every line; whitespace-only lines become empty so no line ends in spaces. */
function indentLines(text: string, indent: string): string {
  return text
    .split('\n')
    .map((line) => (line.trim() === '' ? '' : indent + line))
    .join('\n');
}

/** Keeps the first line as is and indents the following ones. */
function hangingIndent(text: string, indent: string): string {
  const newline = text.indexOf('\n');
  if (newline === -1) return text;
  return text.slice(0, newline + 1) + indentLines(text.slice(newline + 1), indent);
}
