/**
 * What the start-up cache is keyed by: every file under the agents folder
 * (definition files, the modules they import from inside it, agents/mcp.json,
 * icons) with its size and modification time. Any difference, a file added or
 * removed included, makes the cache stale.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** A file's path relative to the agents folder (with `/`), its size in bytes and its mtime in ms. */
export type FileStamp = [file: string, size: number, mtimeMs: number];

/**
 * Every file under `agentsDir` that discovery could read (not in node_modules or a dot-folder, not a dot-file), sorted by path,
 * leaving out `dataDir` when it lies inside (threads written there are no part of the definitions).
 */
export function stampFolder(agentsDir: string, dataDir?: string): FileStamp[] {
  const stamps: FileStamp[] = [];
  const root = path.resolve(agentsDir);
  // Only a data folder inside the agents folder: one that holds it (or is it) would leave nothing to stamp.
  const resolvedData = dataDir === undefined ? undefined : path.resolve(dataDir);
  const data = resolvedData?.startsWith(root + path.sep) ? resolvedData : undefined;
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true, recursive: true });
  } catch {
    return stamps;
  }
  // Folders' paths relative to the root, worked out once per folder rather than once per file (10,000 files of
  // a big folder sit in a few folders, and path.relative resolves both its paths every time).
  const folders = new Map<string, string[] | undefined>();
  const folderParts = (parentPath: string): string[] | undefined => {
    if (!folders.has(parentPath)) {
      const parts = parentPath === root ? [] : path.relative(root, parentPath).split(path.sep);
      // The rule of discover.ts: what it skips is not read by a load either.
      const inData = data !== undefined && (parentPath === data || parentPath.startsWith(data + path.sep));
      const skipped = parts.some((part) => part === 'node_modules' || part.startsWith('.'));
      folders.set(parentPath, skipped || inData ? undefined : parts);
    }
    return folders.get(parentPath);
  };
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    if (entry.name.startsWith('.')) continue;
    const parts = folderParts(entry.parentPath);
    if (parts === undefined || entry.name === 'node_modules') continue;
    try {
      // Undefined when gone since the listing (or a dangling link): not part of the folder.
      const stat = statSync(`${entry.parentPath}${path.sep}${entry.name}`, { throwIfNoEntry: false });
      if (stat?.isFile()) stamps.push([parts.length ? `${parts.join('/')}/${entry.name}` : entry.name, stat.size, stat.mtimeMs]);
    } catch {
      // A link that cannot be followed (a loop, say): not part of the folder either.
    }
  }
  return stamps.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

export function sameStamps(a: readonly FileStamp[], b: readonly FileStamp[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const [fileA, sizeA, timeA] = a[i]!;
    const [fileB, sizeB, timeB] = b[i]!;
    if (fileA !== fileB || sizeA !== sizeB || timeA !== timeB) return false;
  }
  return true;
}
