/**
 * The secret variables a folder declares (prompts, agents, tools) whose
 * values are in the server's environment: known to the log redactor from the
 * start, before any run resolves them.
 */
import { hideInLogs } from '../../log.js';
import { secretNamesOf } from '../../registry/secretNames.js';
import type { Registry } from '../../registry/types.js';

export function hideDeclaredSecrets(registry: Registry, env: Readonly<Record<string, string | undefined>>): void {
  for (const name of secretNamesOf(registry).variables) {
    const value = env[name];
    if (value && value.length >= 4) hideInLogs(value);
  }
}
