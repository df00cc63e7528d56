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
  format: 'module' | 'prompty';
}

export async function discoverDefinitionFiles(agentsDir: string): Promise<DiscoveredFile[]> {
  const found: DiscoveredFile[] = [];
  // One walk of the whole folder: modules count in the kind folders, .prompty files anywhere.
  for (const file of await walk(agentsDir)) {
    if (file.endsWith('.prompty')) {
      found.push({ file, kind: 'prompt', format: 'prompty' });
      continue;
    }
    const folder = path.relative(agentsDir, file).split(path.sep)[0] ?? '';
    const kind = Object.hasOwn(KIND_FOLDERS, folder) ? KIND_FOLDERS[folder] : undefined;
    if (kind && MODULE_FILE.test(file) && !SKIPPED_FILE.test(file)) found.push({ file, kind, format: 'module' });
  }
  // Sorted so load order, and with it every listing, is the same on every machine.
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** The files (not links) under `dir` that discovery reads. */
async function walk(dir: string): Promise<string[]> {
  return (await walkFolder(dir)).filter((entry) => !entry.link).map((entry) => path.join(entry.parentPath, entry.name));
}
