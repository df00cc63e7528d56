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
  const where = [issue.file, issue.definition && `"${issue.definition}"`, issue.field && `field ${issue.field}`].filter(Boolean).join(' ');
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

/**
 * What a value is, for "got ..." in messages: `number 42`, `string "x"`,
 * `an object`. With `withValue: false` only the kind (`a string`), for fields
 * whose values may be secrets (env defaults).
 */
export function describeValue(value: unknown, withValue = true): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': {
      if (!withValue) return 'a string';
      const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
      return `string ${JSON.stringify(shown)}`;
    }
    case 'number':
    case 'boolean':
    case 'bigint':
      return withValue ? `${typeof value} ${String(value)}` : `a ${typeof value}`;
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      break;
  }
  if (Array.isArray(value)) return 'an array';
  const zodType = (value as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type;
  if (typeof zodType === 'string') return `a zod ${zodType} schema`;
  return 'an object';
}

/** ` (did you mean "x"?)` for a close name among `candidates`, else "". */
export function suggestName(name: string, candidates: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
