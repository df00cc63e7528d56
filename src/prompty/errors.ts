/**
 * Errors of the `.prompty` loader and renderer.
 *
 * Loading collects every problem of a file and throws one error (code `PROMPTY_INVALID`) listing
 * them all; rendering throws at the first problem (code `PROMPTY_RENDER`). Both are
 * {@link AgentportError}s made by {@link promptyError}.
 */
import { AgentportError, hasCode } from '../errors.js';

/** One problem found in a `.prompty` file. */
export interface PromptyIssue {
  /** 1-based line in the file, when known. */
  line?: number;
  /** Frontmatter field path (`inputs[0].type`, `model.id`) or body construct, when relevant. */
  field?: string;
  message: string;
}

/** Formats an issue as `file:line: field: message`. */
export function formatIssue(file: string, issue: PromptyIssue): string {
  const where = issue.line !== undefined ? `${file}:${issue.line}` : file;
  const field = issue.field !== undefined ? ` ${issue.field}:` : '';
  return `${where}:${field} ${issue.message}`;
}

/** The codes of `.prompty` errors: `PROMPTY_INVALID` at load, `PROMPTY_RENDER` at render. */
export type PromptyErrorCode = 'PROMPTY_INVALID' | 'PROMPTY_RENDER';

/** `data` of a `.prompty` error: the file, the first issue's line and field, and every issue. */
export interface PromptyErrorData {
  file: string;
  line?: number;
  field?: string;
  issues: PromptyIssue[];
  /**
   * What a file that failed to load names, from the fields that checked out: the registry still
   * checks these references, so that their problems come in the same pass as the file's own.
   */
  references?: { name: string; model?: string; tools?: Array<string | Record<string, unknown>>; hooks?: string[] };
}

/**
 * A `.prompty` file is invalid (load) or cannot be rendered with the given arguments (render): an
 * {@link AgentportError} whose `data` is {@link PromptyErrorData} (`line` and `field` are those of
 * the first issue; `issues` holds all of them).
 */
export function promptyError(file: string, issues: PromptyIssue[], code: PromptyErrorCode = 'PROMPTY_INVALID'): AgentportError {
  const first = issues[0] ?? { message: 'invalid prompty file' };
  const message =
    issues.length <= 1
      ? formatIssue(file, first)
      : `${issues.length} problems in ${file}:\n${issues.map((i) => `  - ${formatIssue(file, i)}`).join('\n')}`;
  const data: PromptyErrorData = {
    file,
    ...(first.line !== undefined ? { line: first.line } : {}),
    ...(first.field !== undefined ? { field: first.field } : {}),
    issues,
  };
  return new AgentportError(code, message, { ...data });
}

/** The {@link PromptyErrorData} of a `.prompty` error, or undefined for any other value. */
export function promptyErrorData(error: unknown): PromptyErrorData | undefined {
  if (!hasCode(error, 'PROMPTY_INVALID') && !hasCode(error, 'PROMPTY_RENDER')) return undefined;
  const data = error.data;
  if (!data || typeof data.file !== 'string' || !Array.isArray(data.issues)) return undefined;
  return data as unknown as PromptyErrorData;
}

/** Accumulates issues and warnings while loading one file. */
export class IssueCollector {
  readonly issues: PromptyIssue[] = [];
  readonly warnings: PromptyIssue[] = [];

  constructor(readonly file: string) {}

  error(issue: PromptyIssue): void {
    this.issues.push(issue);
  }

  warn(issue: PromptyIssue): void {
    this.warnings.push(issue);
  }

  /** Warnings sorted by line. */
  sortedWarnings(): PromptyIssue[] {
    return [...this.warnings].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  }

  /** Throws one `PROMPTY_INVALID` error listing every issue, sorted by line, if there are any. */
  throwIfAny(): void {
    if (this.issues.length === 0) return;
    const sorted = [...this.issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw promptyError(this.file, sorted);
  }
}
