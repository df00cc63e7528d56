/**
 * Finds definition files under the agents folder. Each kind lives in its own
 * sub-folder; `.prompty` files are prompts wherever they are.
 */
import path from 'node:path';
import type { DefinitionKind } from '../definitions/brand.js';
import { walkFolder } from './folderWalk.js';

export const KIND_FOLDERS: Record<string, DefinitionKind> = {
  models: 'model',
  prompts: 'prompt',
  tools: 'tool',
  hooks: 'hook',
  agents: 'agent',
};

const MODULE_FILE = /\.(ts|mts|js|mjs)$/;
const SKIPPED_FILE = /(\.d\.ts|\.d\.mts|\.test\.[mc]?[jt]s|\.spec\.[mc]?[jt]s)$/;

export interface DiscoveredFile {
  file: string;
  /** The kind implied by the folder, or `prompt` for a `.prompty` file. */
  kind: DefinitionKind;
  /** `link`: a symbolic link where a definition would be, which is not loaded (the load warns of it). */
  format: 'module' | 'prompty' | 'link';
}

/** @param leaveOut folders inside the agents folder that hold no definitions (a data folder): not entered */
export async function discoverDefinitionFiles(agentsDir: string, leaveOut: readonly string[] = []): Promise<DiscoveredFile[]> {
  const found: DiscoveredFile[] = [];
  // The kind folder each folder lies in, worked out once per folder (10,000 files of a big folder sit in a few).
  const kinds = new Map<string, DefinitionKind | undefined>();
  const kindOf = (folder: string): DefinitionKind | undefined => {
    if (!kinds.has(folder)) {
      const top = path.relative(agentsDir, folder).split(path.sep)[0] ?? '';
      kinds.set(folder, Object.hasOwn(KIND_FOLDERS, top) ? KIND_FOLDERS[top] : undefined);
    }
    return kinds.get(folder);
  };
  // One walk of the whole folder: modules count in the kind folders, .prompty files anywhere. Links are not read
  // (what they point at may lie outside the folder, and its changes would not reach the start-up cache's stamps):
  // one where a definition would be is listed, so the load can say so.
  for (const entry of await walkFolder(agentsDir, leaveOut)) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.name.endsWith('.prompty')) {
      found.push({ file, kind: 'prompt', format: entry.link ? 'link' : 'prompty' });
      continue;
    }
    const kind = kindOf(entry.parentPath);
    if (kind && MODULE_FILE.test(entry.name) && !SKIPPED_FILE.test(entry.name))
      found.push({ file, kind, format: entry.link ? 'link' : 'module' });
  }
  // Sorted so load order, and with it every listing, is the same on every machine.
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
