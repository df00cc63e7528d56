import { AgentportError } from '../errors.js';
import { formatIssue, type LoadIssue } from '../definitions/issues.js';

/**
 * The error thrown when the agents/ folder has errors: code
 * `DEFINITION_INVALID`, every issue (warnings too) in the message and in
 * `data.issues`.
 */
export function registryLoadError(issues: LoadIssue[]): AgentportError {
  const errors = issues.filter((i) => i.severity === 'error');
  return new AgentportError(
    'DEFINITION_INVALID',
    `agents folder has ${errors.length} error${errors.length === 1 ? '' : 's'}:\n` + issues.map((i) => `  ${formatIssue(i)}`).join('\n'),
    { issues },
  );
}

/** The issues of a `DEFINITION_INVALID` error, or undefined for any other value. */
export function loadIssuesOf(error: unknown): LoadIssue[] | undefined {
  if (!(error instanceof AgentportError) || error.code !== 'DEFINITION_INVALID') return undefined;
  const issues = error.data?.issues;
  return Array.isArray(issues) ? (issues as LoadIssue[]) : undefined;
}
