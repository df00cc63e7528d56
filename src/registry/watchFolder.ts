/**
 * Watches an agents folder (chokidar) for `serve --watch`: every file in it
 * counts (definitions, .prompty files, included text, mcp.json), except
 * under node_modules, dot-folders (.agentport, .git) and dotfiles (editor
 * swap files), and the folders given in `ignore` (a data folder inside it).
 * A burst of events (an editor's save, a git checkout) becomes one call
 * once the folder has been quiet for `debounceMs`.
 */
import path from 'node:path';
import { stampFolder, stampKey, type FileStamp } from '../server/startupCache/stamps.js';
import { isSkippedName } from './folderWalk.js';

const DEFAULT_DEBOUNCE_MS = 150;

export interface FolderWatcher {
  /** Changes found by other means (files outside the folder): they wait out the same quiet time as the folder's. */
  changed(paths: readonly string[]): void;
  close(): Promise<void>;
}

export interface WatchFolderOptions {
  debounceMs?: number;
  /** Folders whose changes do not count. */
  ignore?: readonly string[];
  onError?: (error: Error) => void;
  /**
   * The folder's files as they were when it was read (stamps.ts): what differs once watching has started
   * (added, removed, or another size or modification time) is reported as one change then, so that an edit
   * made while the server started is not missed.
   */
  baseline?: readonly FileStamp[];
}

/** Only folders inside the watched one count: a data folder that holds the agents folder must not hide all of it. */
function foldersInside(root: string, ignore: readonly string[]): string[] {
  return ignore.map((folder) => path.resolve(folder)).filter((folder) => folder.startsWith(root + path.sep));
}

/**
 * Whether the watch of `dir` sees a file (an absolute path): one inside it, not under a skipped name
 * (node_modules, dot-folders, dotfiles) nor in one of the `ignore` folders. The folder itself counts as seen.
 */
export function folderWatchSees(dir: string, ignore: readonly string[]): (file: string) => boolean {
  const root = path.resolve(dir);
  const ignoredFolders = foldersInside(root, ignore);
  return (file) => {
    const relative = path.relative(root, file);
    if (!relative) return true;
    if (relative.startsWith('..') || path.isAbsolute(relative)) return false;
    if (relative.split(path.sep).some(isSkippedName)) return false;
    return !ignoredFolders.some((folder) => file === folder || file.startsWith(folder + path.sep));
  };
}

/** Resolves once the folder is being watched (changes made before that are seen only with `baseline`). */
export async function watchFolder(
  dir: string,
  onChange: (paths: string[]) => void,
  options: WatchFolderOptions = {},
): Promise<FolderWatcher> {
  // Loaded only by serve --watch.
  const { watch } = await import('chokidar');
  const root = path.resolve(dir);
  const ignoredFolders = foldersInside(root, options.ignore ?? []);
  const sees = folderWatchSees(root, options.ignore ?? []);
  // chokidar asks about the root and what lies under it.
  const ignored = (file: string): boolean => !sees(file);
  const watcher = watch(root, { ignoreInitial: true, ignored });
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  let changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const note = (files: readonly string[]) => {
    for (const file of files) changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const paths = [...changed];
      changed = new Set();
      onChange(paths);
    }, debounceMs);
  };
  watcher.on('all', (_event, file) => note([file]));
  watcher.on('error', (error) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  if (options.baseline !== undefined) {
    const missed = changedSince(root, options.baseline, ignoredFolders, ignored);
    if (missed.length > 0 && changed.size === 0 && timer === undefined) onChange(missed);
  }
  return {
    changed: note,
    close: async () => {
      clearTimeout(timer);
      await watcher.close();
    },
  };
}

/**
 * The files under `root` added, removed or changed (size or modification time) since `baseline` was taken.
 * Compared stamp to stamp, not against a clock, so a file dated in the future or a busy data folder inside
 * the agents folder does not count as an edit.
 */
function changedSince(
  root: string,
  baseline: readonly FileStamp[],
  ignoredFolders: readonly string[],
  ignored: (file: string) => boolean,
): string[] {
  const before = new Map(baseline.map((entry) => [entry[0], stampKey(entry)]));
  const found: string[] = [];
  for (const entry of stampFolder(root, ignoredFolders)) {
    if (before.get(entry[0]) !== stampKey(entry)) found.push(path.join(root, entry[0]));
    before.delete(entry[0]);
  }
  for (const file of before.keys()) found.push(path.join(root, file));
  return found.filter((file) => !ignored(file));
}
