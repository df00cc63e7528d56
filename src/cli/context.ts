/**
 * What every command needs: where the agents folder and the data folder are,
 * and a registry loaded from it with its problems printed to stderr.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatIssue, suggestName, type LoadIssue } from '../definitions/issues.js';
import { discoverDefinitionFiles, KIND_FOLDERS, type DiscoveredFile } from '../registry/discover.js';
import type { Registry } from '../registry/types.js';
import { TRANSPILE_CACHE_FOLDER } from '../registry/transpileCacheFolder.js';

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
  return explicit ? path.resolve(expandHome(explicit)) : path.join(path.dirname(agentsDirOf(options)), '.agentport');
}

/**
 * Where caches are kept (the TypeScript transpile cache): `AGENTPORT_CACHE_DIR`, else `cache/` in the data
 * folder. Caches are keyed by content, so one folder may serve several data folders and processes.
 */
export function cacheDirOf(options: DirOptions): string {
  const explicit = process.env.AGENTPORT_CACHE_DIR;
  return explicit ? path.resolve(expandHome(explicit)) : path.join(dataDirOf(options), 'cache');
}

/**
 * A leading `${HOME}`: a bundle's data folder defaults to `${HOME}/...`,
 * which the MCPB spec lets hosts substitute in defaults, but mcpb's own
 * config code passes a default through unexpanded.
 */
function expandHome(dir: string): string {
  return dir.replace(/^\$\{HOME\}(?=$|[\\/])/, () => os.homedir());
}

export interface LoadedForCommand {
  registry: Registry;
  issues: LoadIssue[];
  errors: LoadIssue[];
}

/**
 * @param load.fresh loading again in this process (serve --watch): see LoadRegistryOptions.
 * @param load.env where `${env:}` in agents/mcp.json is looked up, when not process.env.
 * @param load.onRead told each module file the load runs or transpiles, and each it depends on that Node reads itself
 *   (the start-up cache stamps them).
 */
export async function loadForCommand(
  options: DirOptions,
  load: { fresh?: boolean; env?: Readonly<Record<string, string | undefined>>; onRead?: (file: string) => void } = {},
): Promise<LoadedForCommand> {
  const agentsDir = agentsDirOf(options);
  // A data folder inside the agents folder holds threads, not definitions (a file a tool stored may look like one).
  const leaveOut = [dataDirOf(options)];
  const files = await assertAgentsDir(agentsDir, options, leaveOut);
  // Loaded here, not at the top: --help, --version, init and refusals never pay for the loader and zod.
  const { loadRegistry } = await import('../registry/load.js');
  const { registry, issues } = await loadRegistry({
    agentsDir,
    cacheDir: path.join(cacheDirOf(options), TRANSPILE_CACHE_FOLDER),
    ...(load.env ? { env: load.env } : {}),
    ...(load.fresh ? { fresh: true } : {}),
    ...(load.onRead ? { onRead: load.onRead } : {}),
    leaveOut,
    files,
  });
  return {
    registry,
    issues,
    errors: issues.filter((i) => i.severity === 'error'),
  };
}

export function printIssues(issues: readonly LoadIssue[]): void {
  for (const issue of issues) process.stderr.write(`${formatIssue(issue)}\n`);
}

/** Sets a non-zero exit code and prints a one-line reason to stderr. */
export function fail(message: string, exitCode = 1): void {
  process.stderr.write(`agentport: ${message}\n`);
  process.exitCode = exitCode;
}

/** A command refused before it started: main prints the message, exit code 1. */
export class CommandError extends Error {}

/**
 * Refuses an agents folder that is missing, not a folder, or holds no
 * definitions (no module under models/, prompts/, tools/, hooks/ or agents/,
 * no .prompty file, no mcp.json), suggesting a sibling folder with a close
 * name or a folder nearby that holds definitions.
 */
async function assertAgentsDir(agentsDir: string, options: DirOptions, leaveOut: readonly string[]): Promise<DiscoveredFile[]> {
  const shown = shownPath(agentsDir);
  const given =
    options.dir !== undefined ? '' : process.env.AGENTPORT_DIR ? ' (from AGENTPORT_DIR)' : ' (the default: pass --dir for another)';
  const hint = () => didYouMean(agentsDir) ?? `; create one with: agentport init ${shown}`;
  let isDirectory: boolean;
  try {
    isDirectory = statSync(agentsDir).isDirectory();
  } catch {
    throw new CommandError(`agents folder ${shown}${given} does not exist${hint()}`);
  }
  if (!isDirectory) throw new CommandError(`${shown}${given} is not a folder: --dir takes the agents folder`);
  // A project folder holding agents/ (passed as `--dir .`) would load agents/prompts/x.ts as an agent definition.
  const kindFolders = entriesOf(agentsDir).filter((e) => e.isDirectory() && Object.hasOwn(KIND_FOLDERS, e.name));
  if (kindFolders.length === 1 && kindFolders[0]!.name === 'agents' && looksLikeAgentsDir(path.join(agentsDir, 'agents'), false)) {
    throw new CommandError(
      `${shown}${given} is not an agents folder but holds one; did you mean ${shownPath(path.join(agentsDir, 'agents'))}?`,
    );
  }
  const files = await discoverDefinitionFiles(agentsDir, leaveOut);
  if (files.length > 0 || entriesOf(agentsDir).some((e) => e.isFile() && e.name === 'mcp.json')) return files;
  throw new CommandError(
    `agents folder ${shown}${given} has no definitions (.ts or .js files under ${Object.keys(KIND_FOLDERS)
      .map((k) => `${k}/`)
      .join(', ')}, or .prompty files)${hint()}`,
  );
}

/**
 * `; did you mean X?`: a sibling whose name is close to the folder's and
 * that holds definitions (or any close sibling), else a folder inside it or
 * beside it that holds definitions.
 */
function didYouMean(agentsDir: string): string | undefined {
  const parent = path.dirname(agentsDir);
  const name = path.basename(agentsDir);
  const siblings = entriesOf(parent).filter(
    (e) => e.isDirectory() && e.name !== name && !e.name.startsWith('.') && e.name !== 'node_modules',
  );
  const close = (candidates: Dirent[]) =>
    /"(.*)"/.exec(
      suggestName(
        name,
        candidates.map((e) => e.name),
      ),
    )?.[1];
  const looking = siblings.filter((e) => looksLikeAgentsDir(path.join(parent, e.name)));
  const inside = entriesOf(agentsDir).find((e) => e.isDirectory() && looksLikeAgentsDir(path.join(agentsDir, e.name)));
  const pick =
    close(looking) ??
    close(siblings) ??
    (inside ? path.join(name, inside.name) : undefined) ??
    (looking.length === 1 ? looking[0]!.name : undefined);
  return pick === undefined ? undefined : `; did you mean ${shownPath(path.join(parent, pick))}?`;
}

/** A shallow look: a kind folder (with `agentsKind`, agents/ too), a .prompty file or mcp.json directly inside. */
function looksLikeAgentsDir(dir: string, agentsKind = true): boolean {
  return entriesOf(dir).some(
    (e) =>
      (e.isDirectory() && Object.hasOwn(KIND_FOLDERS, e.name) && (agentsKind || e.name !== 'agents')) ||
      (e.isFile() && (e.name.endsWith('.prompty') || e.name === 'mcp.json')),
  );
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** A path as the user would type it: relative to the working directory when inside it. */
export function shownPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}
