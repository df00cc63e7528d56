/**
 * What the start-up cache is keyed by: every file under the agents folder
 * (definition files, the modules they import from inside it, agents/mcp.json,
 * icons) with its size and modification time. Any difference, a file added or
 * removed included, makes the cache stale.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { walkFolderSync } from '../../registry/folderWalk.js';

/** A file's path relative to the agents folder (with `/`), its size in bytes and its mtime in ms. */
export type FileStamp = [file: string, size: number, mtimeMs: number];

/**
 * Every file under `agentsDir` that discovery could read (registry/folderWalk.ts), sorted by path, leaving
 * out the `excluded` folders that lie inside it (a data folder: threads written there are no part of the
 * definitions; one that holds the agents folder, or is it, leaves nothing out).
 */
export function stampFolder(agentsDir: string, excluded: readonly string[] = []): FileStamp[] {
  const stamps: FileStamp[] = [];
  const root = path.resolve(agentsDir);
  let entries;
  try {
    // The walk compares only folders inside the root: a data folder holding the agents folder (or equal to it) leaves nothing out.
    entries = walkFolderSync(root, excluded);
  } catch {
    return stamps;
  }
  // Folders' paths relative to the root, worked out once per folder rather than once per file (10,000 files of
  // a big folder sit in a few folders, and path.relative resolves both its paths every time).
  const folders = new Map<string, string>();
  const prefixOf = (parentPath: string): string => {
    let prefix = folders.get(parentPath);
    if (prefix === undefined) {
      prefix = parentPath === root ? '' : `${path.relative(root, parentPath).split(path.sep).join('/')}/`;
      folders.set(parentPath, prefix);
    }
    return prefix;
  };
  for (const entry of entries) {
    try {
      // Undefined when gone since the listing (or a dangling link): not part of the folder.
      const stat = statSync(`${entry.parentPath}${path.sep}${entry.name}`, { throwIfNoEntry: false });
      if (stat?.isFile()) stamps.push([`${prefixOf(entry.parentPath)}${entry.name}`, stat.size, stat.mtimeMs]);
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
