/**
 * What the start-up cache is keyed by: every file under the agents folder
 * (definition files, the modules they import from inside it, agents/mcp.json,
 * icons) with its size, modification and change times and inode, and the files
 * a full load read or depended on that the walk does not see (stampFile): the
 * modules Node loaded itself, the packages' manifests and install records,
 * present or absent (registry/importTrace.ts), and the files the definitions
 * read themselves with node:fs (fileReads.ts). Any difference, a file added or
 * removed included, makes the cache stale. The change time and
 * inode catch an edit that kept the size and put the modification time back
 * (`touch -r`, `cp -p`, `rsync -t`): no one can set a change time, and a copy
 * renamed into place is another inode.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { walkFolderSync } from '../../registry/folderWalk.js';

/** A file's path (relative to the agents folder, with `/`; or absolute, from stampFile), size in bytes, mtime and ctime in ms, inode. */
export type FileStamp = [file: string, size: number, mtimeMs: number, ctimeMs: number, inode: number];

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
      if (stat?.isFile()) stamps.push([`${prefixOf(entry.parentPath)}${entry.name}`, stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino]);
    } catch {
      // A link that cannot be followed (a loop, say): not part of the folder either.
    }
  }
  return stamps.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** One file by its absolute path; a file that is not there (or not a file) has -1 for size, times and inode. */
export function stampFile(file: string): FileStamp {
  let stat;
  try {
    stat = statSync(file, { throwIfNoEntry: false });
  } catch {
    // A link that cannot be followed: as good as gone.
  }
  return stat?.isFile() ? [file, stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino] : [file, -1, -1, -1, -1];
}

/** A stamp without its path: the same for one file under two paths, and (in practice) for no two files. */
export function stampKey(stamp: FileStamp): string {
  return stamp.slice(1).join(':');
}

/** Whether files stamped by their absolute paths (stampFile) are as they were; stamps read back from the cache may be any JSON. */
export function sameFiles(stamps: readonly FileStamp[]): boolean {
  return sameStamps(
    stamps,
    stamps.map((stamp) => stampFile(String((stamp as unknown[])[0]))),
  );
}

export function sameStamps(a: readonly FileStamp[], b: readonly FileStamp[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const stampA = a[i]!;
    const stampB = b[i]!;
    // A stamp read back from the cache may be any JSON: compared field by field, a short one never matches.
    if (!Array.isArray(stampA) || stampA.length !== stampB.length || stampA.some((value, at) => value !== stampB[at])) return false;
  }
  return true;
}
