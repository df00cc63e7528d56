/**
 * What every command needs: where the agents folder and the data folder are,
 * and a registry loaded from it with its problems printed to stderr.
 */
import path from 'node:path';
import { formatIssue, type LoadIssue } from '../definitions/issues.js';
import { loadRegistry } from '../registry/load.js';
import type { Registry } from '../registry/types.js';

export interface DirOptions {
  dir?: string;
  dataDir?: string;
}

export const DEFAULT_AGENTS_DIR = 'agents';
/** The --dir option every command shares; no commander default, so AGENTPORT_DIR can apply. */
export const DIR_OPTION = '-d, --dir <path>';
export const DIR_HELP = `agents folder (default: $AGENTPORT_DIR, else ./${DEFAULT_AGENTS_DIR})`;

export function agentsDirOf(options: DirOptions): string {
  return path.resolve(options.dir ?? process.env.AGENTPORT_DIR ?? DEFAULT_AGENTS_DIR);
}

/** `--data-dir`, `AGENTPORT_DATA_DIR`, or `.agentport/` beside the agents folder. */
export function dataDirOf(options: DirOptions): string {
  const explicit = options.dataDir ?? process.env.AGENTPORT_DATA_DIR;
  return explicit ? path.resolve(explicit) : path.join(path.dirname(agentsDirOf(options)), '.agentport');
}

export interface LoadedForCommand {
  registry: Registry;
  issues: LoadIssue[];
  errors: LoadIssue[];
}

export async function loadForCommand(options: DirOptions): Promise<LoadedForCommand> {
  const agentsDir = agentsDirOf(options);
  const { registry, issues } = await loadRegistry({
    agentsDir,
    cacheDir: path.join(dataDirOf(options), 'cache', 'jiti'),
  });
  return { registry, issues, errors: issues.filter((i) => i.severity === 'error') };
}

export function printIssues(issues: readonly LoadIssue[]): void {
  for (const issue of issues) process.stderr.write(`${formatIssue(issue)}\n`);
}

/** Sets a non-zero exit code and prints a one-line reason to stderr. */
export function fail(message: string, exitCode = 1): void {
  process.stderr.write(`agentport: ${message}\n`);
  process.exitCode = exitCode;
}
