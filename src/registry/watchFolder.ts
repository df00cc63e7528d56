/**
 * Watches an agents folder (chokidar) for `serve --watch`: every file in it
 * counts (definitions, .prompty files, included text, mcp.json), except
 * under node_modules, dot-folders (.agentport, .git) and dotfiles (editor
 * swap files), and the folders given in `ignore` (a data folder inside it).
 * A burst of events (an editor's save, a git checkout) becomes one call
 * once the folder has been quiet for `debounceMs`.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

const DEFAULT_DEBOUNCE_MS = 150;

export interface FolderWatcher {
  close(): Promise<void>;
}

export interface WatchFolderOptions {
  debounceMs?: number;
  /** Folders whose changes do not count. */
  ignore?: readonly string[];
  onError?: (error: Error) => void;
  /**
   * When the folder was read (ms since the epoch): what changed between then and the moment watching
   * starts is reported as one change once it has started, so that an edit made while the server
   * started is not missed.
   */
  since?: number;
}

/** Resolves once the folder is being watched (changes made before that are seen only with `since`). */
export async function watchFolder(
  dir: string,
  onChange: (paths: string[]) => void,
  options: WatchFolderOptions = {},
): Promise<FolderWatcher> {
  // Loaded only by serve --watch.
  const { watch } = await import('chokidar');
  const root = path.resolve(dir);
  const ignoredFolders = (options.ignore ?? []).map((folder) => path.resolve(folder));
  const ignored = (file: string): boolean => {
    const relative = path.relative(root, file);
    if (!relative || relative.startsWith('..')) return false;
    if (relative.split(path.sep).some((part) => part === 'node_modules' || part.startsWith('.'))) return true;
    return ignoredFolders.some((folder) => file === folder || file.startsWith(folder + path.sep));
  };
  const watcher = watch(root, { ignoreInitial: true, ignored });
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  watcher.on('all', (_event, file) => {
    changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = [...changed];
      changed = new Set();
      onChange(paths);
    }, debounceMs);
  });
  watcher.on('error', (error) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  if (options.since !== undefined) {
    const missed = await changedSince(root, options.since, ignored);
    if (missed.length > 0 && changed.size === 0 && timer === undefined) onChange(missed);
  }
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

/**
 * Files and folders under `root` modified at or after `since` (a folder's time changes when an entry is
 * added, removed or renamed in it, so removals count too). Modification times and `since` come from the
 * same clock; a file system that keeps them in whole seconds may hide an edit made in the same second.
 */
async function changedSince(root: string, since: number, ignored: (file: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    let entries;
    try {
      if ((await stat(dir)).mtimeMs >= since) found.push(dir);
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      // Removed meanwhile: the watcher reports what follows.
      return;
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name);
      if (ignored(file)) continue;
      if (entry.isDirectory()) await visit(file);
      else if (
        await stat(file).then(
          (info) => info.mtimeMs >= since,
          () => false,
        )
      )
        found.push(file);
    }
  };
  await visit(root);
  return found;
}
