import { formatIssue, type LoadIssue } from '../definitions/issues.js';

/** Thrown when the agents/ folder has errors; carries every issue found. */
export class RegistryLoadError extends Error {
  readonly code = 'DEFINITION_INVALID';
  constructor(readonly issues: LoadIssue[]) {
    const errors = issues.filter((i) => i.severity === 'error');
    super(
      `agents folder has ${errors.length} error${errors.length === 1 ? '' : 's'}:\n` +
        issues.map((i) => `  ${formatIssue(i)}`).join('\n'),
    );
    this.name = 'RegistryLoadError';
  }
}
