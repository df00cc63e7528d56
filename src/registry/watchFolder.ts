/**
 * Watches an agents folder (chokidar) for `serve --watch`: every file in it
 * counts (definitions, .prompty files, included text, mcp.json), except
 * under node_modules, dot-folders (.agentport, .git) and dotfiles (editor
 * swap files), and the folders given in `ignore` (a data folder inside it).
 * A burst of events (an editor's save, a git checkout) becomes one call
 * once the folder has been quiet for `debounceMs`.
 */
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
}

/** Resolves once the folder is being watched (changes made before that are not seen). */
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
  return {
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}
