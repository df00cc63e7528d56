/**
 * The one walk of the agents folder that discovery, the start-up cache key
 * and `serve --watch` share. Folders every read leaves out (`node_modules`,
 * dot-folders, a data folder inside the agents folder) are not entered at
 * all: an agents folder with a package of its own can hold tens of thousands
 * of files under node_modules, and listing them only to drop them cost a start
 * (and every `--watch` check) time in proportion to them.
 */
import { readdirSync, type Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Whether a folder or file name under the agents folder is left out of every read of it (discovery, the
 * start-up cache key, serve --watch): node_modules, and dot-folders and dotfiles (`.wip/`, `.git/`).
 */
export function isSkippedName(name: string): boolean {
  return name === 'node_modules' || name.startsWith('.');
}

/** A file (or link) found by the walk: its folder's path (under the root as given) and its name. */
export interface WalkedEntry {
  parentPath: string;
  name: string;
  /** A symbolic link, which the walk does not follow (a link to a folder is not entered). */
  link: boolean;
}

/**
 * Every file and link under `root` outside skipped names and the `leaveOut` folders, in no particular order.
 * Only folders inside `root` are compared with `leaveOut`: one that is `root` or holds it leaves nothing out.
 * A folder that is not there (the root, or one removed since its parent was listed) holds nothing; one that
 * cannot be read throws, naming it.
 */
export async function walkFolder(root: string, leaveOut: readonly string[] = []): Promise<WalkedEntry[]> {
  const found: WalkedEntry[] = [];
  const walker = new Walker(leaveOut, found);
  let folder: string | undefined = root;
  while (folder !== undefined) {
    const listed = await readdir(folder, { withFileTypes: true }).catch(nothingIfGone);
    walker.take(folder, listed);
    folder = walker.next();
  }
  return found;
}

/** {@link walkFolder}, synchronously. */
export function walkFolderSync(root: string, leaveOut: readonly string[] = []): WalkedEntry[] {
  const found: WalkedEntry[] = [];
  const walker = new Walker(leaveOut, found);
  let folder: string | undefined = root;
  while (folder !== undefined) {
    let listed: Dirent[];
    try {
      listed = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      listed = nothingIfGone(error);
    }
    walker.take(folder, listed);
    folder = walker.next();
  }
  return found;
}

/** A folder that could not be listed: nothing when it is not there (any more), else the error (fs names the folder). */
function nothingIfGone(error: unknown): Dirent[] {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return [];
  throw error;
}

/** What both walks share: which entries count, which folders are entered next. */
class Walker {
  private readonly pending: string[] = [];
  private readonly leaveOut: ReadonlySet<string>;

  constructor(
    leaveOut: readonly string[],
    private readonly found: WalkedEntry[],
  ) {
    this.leaveOut = new Set(leaveOut.map((folder) => path.resolve(folder)));
  }

  take(folder: string, entries: readonly Dirent[]): void {
    for (const entry of entries) {
      if (isSkippedName(entry.name)) continue;
      if (entry.isDirectory()) {
        const inner = path.join(folder, entry.name);
        if (!this.leaveOut.has(path.resolve(inner))) this.pending.push(inner);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        this.found.push({ parentPath: folder, name: entry.name, link: entry.isSymbolicLink() });
      }
    }
  }

  next(): string | undefined {
    return this.pending.pop();
  }
}
