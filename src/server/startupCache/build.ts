/**
 * The start-up cache's content, from a folder that has just loaded without
 * errors: where each definition lives (its file among the stamped ones) and
 * what serving needs to know about all of them without importing them.
 */
import path from 'node:path';
import type { DefinitionKind } from '../../definitions/brand.js';
import type { LoadIssue } from '../../definitions/issues.js';
import { secretNamesOf } from '../../registry/secretNames.js';
import type { Registry } from '../../registry/types.js';
import type { ExposedTool } from '../toolCatalog.js';
import type { StartupCache } from './cacheFile.js';
import type { EnvironmentKey } from './environment.js';
import { stampFile, stampKey, type FileStamp } from './stamps.js';

/**
 * Undefined when a definition does not come from one module file of the
 * folder (a `.prompty` file, whose `${env:}` and `${file:}` values the stamps
 * do not cover): such folders load in full at every start.
 * @param beyond what the definitions depend on beyond the walk ({@link beyondTheWalk})
 * @param environment the environment variables the definitions read while they loaded (environment.ts)
 */
export function startupCacheOf(
  registry: Registry,
  stamps: FileStamp[],
  tools: ExposedTool[],
  warnings: LoadIssue[],
  beyond: FileStamp[],
  environment: EnvironmentKey,
): StartupCache | undefined {
  const fileIndex = new Map(stamps.map(([file], i) => [file, i]));
  const definitions: StartupCache['definitions'] = [];
  const kinds: Array<[DefinitionKind, ReadonlyMap<string, { file: string }>]> = [
    ['model', registry.models],
    ['prompt', registry.prompts],
    ['tool', registry.tools],
    ['hook', registry.hooks],
    ['agent', registry.agents],
  ];
  for (const [kind, entries] of kinds) {
    for (const [name, entry] of entries) {
      // Entries name their file relative to the working directory, which has not changed since the load.
      const relative = path.relative(registry.agentsDir, path.resolve(entry.file)).split(path.sep).join('/');
      const at = fileIndex.get(relative);
      if (at === undefined || relative.endsWith('.prompty')) return undefined;
      definitions.push([kind, name, at]);
    }
  }
  return {
    files: stamps,
    read: beyond,
    definitions,
    secretNames: secretNamesOf(registry),
    environment,
    warnings,
    tools,
  };
}

/**
 * What a folder's definitions depend on that its walk does not see: the files the load read outside it, and the icon
 * files its prompts and agents name (stamped now). The start-up cache is stale when one changes; `--watch` looks at them.
 */
export function beyondTheWalk(registry: Registry, stamps: readonly FileStamp[], read: ReadonlyMap<string, FileStamp>): FileStamp[] {
  const walked = new Set(stamps.map(stampKey));
  const others = new Map(outsideTheWalk(stamps, read).map((stamp) => [stamp[0], stamp]));
  for (const file of iconFiles(registry)) {
    const stamp = stampFile(file);
    if (!walked.has(stampKey(stamp))) others.set(file, stamp);
  }
  return [...others.values()];
}

/** The stamps of `read` that are not among the walk's `stamps`: files the load read that the folder's walk does not see. */
export function outsideTheWalk(stamps: readonly FileStamp[], read: ReadonlyMap<string, FileStamp>): FileStamp[] {
  // A walked file is known by its stamp, not its path: jiti may name a file by its real path, through the links the
  // walk's path goes through.
  const walked = new Set(stamps.map(stampKey));
  return [...read.values()].filter((stamp) => !walked.has(stampKey(stamp)));
}

/** The image files prompts and agents name as icons (URLs are no files), by absolute path. */
export function iconFiles(registry: Registry): string[] {
  const icons = [...registry.prompts.values(), ...registry.agents.values()].map((entry) => entry.definition.icon);
  // A URL has a scheme; a Windows drive letter is no scheme (icons.ts).
  const isFile = (icon: string | undefined): icon is string =>
    icon !== undefined && (!/^[a-z][a-z0-9+.-]*:/i.test(icon) || /^[a-z]:[\\/]/i.test(icon));
  return icons.filter(isFile).map((icon) => path.resolve(registry.agentsDir, icon));
}
