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

/** Every file under `agentsDir` that discovery could read (not in node_modules, not a dot-file), sorted by path. */
export function stampFolder(agentsDir: string): FileStamp[] {
  const stamps: FileStamp[] = [];
  let entries;
  try {
    entries = readdirSync(agentsDir, { withFileTypes: true, recursive: true });
  } catch {
    return stamps;
  }
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    const relative = path.relative(agentsDir, path.join(entry.parentPath, entry.name));
    const parts = relative.split(path.sep);
    // The rule of discover.ts: what it skips is not read by a load either.
    if (entry.name.startsWith('.') || parts.includes('node_modules')) continue;
    try {
      const stat = statSync(path.join(agentsDir, relative));
      if (stat.isFile()) stamps.push([parts.join('/'), stat.size, stat.mtimeMs]);
    } catch {
      // Gone since the listing (or a dangling link): not part of the folder.
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
