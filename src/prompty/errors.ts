/**
 * Errors of the `.prompty` loader and renderer.
 *
 * Loading collects every problem of a file and throws one {@link PromptyError} listing them all;
 * rendering throws at the first problem.
 */

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

/**
 * A `.prompty` file is invalid (load) or cannot be rendered with the given arguments (render).
 * `line` and `field` are those of the first issue; `issues` holds all of them.
 */
export class PromptyError extends Error {
  /** Stable code for callers that map errors (`PROMPTY_INVALID` at load, `PROMPTY_RENDER` at render). */
  readonly code: 'PROMPTY_INVALID' | 'PROMPTY_RENDER';
  readonly file: string;
  readonly line?: number;
  readonly field?: string;
  readonly issues: readonly PromptyIssue[];

  constructor(file: string, issues: PromptyIssue[], code: PromptyError['code'] = 'PROMPTY_INVALID') {
    const first = issues[0] ?? { message: 'invalid prompty file' };
    const message =
      issues.length <= 1
        ? formatIssue(file, first)
        : `${issues.length} problems in ${file}:\n${issues.map((i) => `  - ${formatIssue(file, i)}`).join('\n')}`;
    super(message);
    this.name = 'PromptyError';
    this.code = code;
    this.file = file;
    if (first.line !== undefined) this.line = first.line;
    if (first.field !== undefined) this.field = first.field;
    this.issues = issues;
  }
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

  /** Throws one {@link PromptyError} listing every issue, sorted by line, if there are any. */
  throwIfAny(): void {
    if (this.issues.length === 0) return;
    const sorted = [...this.issues].sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw new PromptyError(this.file, sorted);
  }
}
