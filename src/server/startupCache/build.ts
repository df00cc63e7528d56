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
import type { FileStamp } from './stamps.js';

/**
 * Undefined when a definition does not come from one module file of the
 * folder (a `.prompty` file, whose `${env:}` and `${file:}` values the stamps
 * do not cover): such folders load in full at every start.
 */
export function startupCacheOf(
  registry: Registry,
  stamps: FileStamp[],
  tools: ExposedTool[],
  warnings: LoadIssue[],
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
  return { files: stamps, definitions, secretNames: secretNamesOf(registry), warnings, tools };
}
