/**
 * A problem found while loading the agents/ folder. Every check reports issues
 * as data so all of them can be shown together, each naming where it is.
 */
export interface LoadIssue {
  severity: 'error' | 'warning';
  /** Path of the file, relative to the working directory when possible. */
  file: string;
  /** Name (or hook id) of the definition, when known. */
  definition?: string;
  /** Dotted path of the field, e.g. `reasoning.effort` or `tools[2]`. */
  field?: string;
  message: string;
}

export function formatIssue(issue: LoadIssue): string {
  const where = [issue.file, issue.definition && `"${issue.definition}"`, issue.field && `field ${issue.field}`]
    .filter(Boolean)
    .join(' ');
  return `${issue.severity}: ${where}: ${issue.message}`;
}

/** Dotted field path from a zod issue path: ['tools', 2, 'name'] -> tools[2].name */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** "field: message; other.field: message" for the issues of a failed zod parse. */
export function describeZodIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues.map((issue) => `${fieldPath(issue.path) || '(arguments)'}: ${issue.message}`).join('; ');
}
