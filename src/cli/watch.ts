/**
 * `serve --watch`: when the agents folder changes, it is loaded again the
 * way serve loaded it at start. A folder that loads without errors replaces
 * what is served (see AgentportServer.replaceRegistry) and a one-line
 * summary is logged; one with errors is reported like at start, and the
 * previous definitions go on being served. Logs go to stderr only.
 *
 * The folder is watched for changes (registry/watchFolder.ts). What the last load read that the
 * folder's watch does not see (a helper outside the folder or in a dot-folder, an imported package's
 * manifest or install record, stamped as it was read; a file a definition read with node:fs, stamped as the load left it)
 * is looked at every
 * {@link DEPENDENCY_POLL_MS}: a change there reloads too.
 */
import { realpathSync } from 'node:fs';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';
import type { AgentportServer } from '../server/createServer.js';
import { iconFiles } from '../server/startupCache/build.js';
import { readingFiles } from '../server/startupCache/fileReads.js';
import { sameFiles, stampFile, type FileStamp } from '../server/startupCache/stamps.js';
import { describeChange } from '../server/registrySurface.js';
import { agentsDirOf, dataDirOf, loadForCommand, printIssues, shownPath, type DirOptions } from './context.js';

export interface WatchSettings {
  /** Aggregator mode needs upstream servers: a folder without any is not taken. */
  exposeUpstream?: boolean;
  debounceMs?: number;
  /** The folder's files as serve read them (stamps.ts): an edit made since, before watching began, is reloaded too. */
  loaded?: readonly FileStamp[];
  /** What serve's load read outside what the folder's watch sees, by absolute path (LoadedForServe.dependencies). */
  dependencies?: readonly FileStamp[];
  /** How often those are looked at (default {@link DEPENDENCY_POLL_MS}). */
  dependencyPollMs?: number;
}

/** How often the files a load read outside the watched folder are looked at (a stat each). */
const DEPENDENCY_POLL_MS = 1_000;

export interface AgentsWatch {
  /** Stops watching; resolves once a reload under way has finished. */
  close(): Promise<void>;
}

export async function watchAgents(server: AgentportServer, options: DirOptions, settings: WatchSettings = {}): Promise<AgentsWatch> {
  const agentsDir = agentsDirOf(options);
  const shown = shownPath(agentsDir);
  const keep = (why: string) => log.warn(`not reloaded: ${why}; still serving the previous definitions`);

  const ignore = [dataDirOf(options)];
  const { watchFolder, folderWatchSees } = await import('../registry/watchFolder.js');
  // A file the load names by its real path (jiti follows links) is seen all the same.
  const seesByPath = folderWatchSees(agentsDir, ignore);
  const seesByRealPath = folderWatchSees(realOrSame(agentsDir), ignore.map(realOrSame));
  const sees = (file: string) => seesByPath(file) || seesByRealPath(file);
  // What the folder's watch sees is left to it: looked at twice, one edit could reload twice.
  let dependencies: readonly FileStamp[] = (settings.dependencies ?? []).filter(([file]) => !sees(file));
  const reload = async (): Promise<void> => {
    let loaded;
    const read = new Map<string, FileStamp>();
    const known = (file: string) => read.has(file) || sees(file);
    const onRead = (file: string) => {
      if (!known(file)) read.set(file, stampFile(file));
    };
    try {
      // With the files the definitions read themselves with node:fs, as serve's full load (fileReads.ts), stamped as
      // the load left them.
      const { result, files } = await readingFiles(agentsDir, known, () => loadForCommand(options, { fresh: true, onRead }));
      for (const file of files) read.set(file, stampFile(file));
      loaded = result;
    } catch (error) {
      // The folder was removed, or holds no definitions any more. What was read is what to look at now; with
      // nothing read, the same files as before, as they are now (else their change would reload again every poll).
      dependencies = read.size > 0 ? [...read.values()] : dependencies.map(([file]) => stampFile(file));
      keep(errorMessage(error));
      return;
    }
    // Icons are read when the catalogue is built, not by the load: looked at too, as the start-up cache does.
    for (const file of iconFiles(loaded.registry)) onRead(file);
    dependencies = [...read.values()];
    const { hideDeclaredSecrets } = await import('../runtime/variables/declaredSecrets.js');
    hideDeclaredSecrets(loaded.registry, process.env);
    printIssues(loaded.issues);
    if (loaded.errors.length) {
      keep(`${loaded.errors.length} error(s) in ${shown} (listed above)`);
      return;
    }
    if (settings.exposeUpstream && !loaded.registry.upstream?.servers.size) {
      keep(`--expose-upstream: ${shown} declares no upstream MCP servers (mcp.json)`);
      return;
    }
    const registry = loaded.registry;
    try {
      // The catalogue is built here, and what it evaluates (a lazy schema, say) may read files too: followed like the
      // load's.
      const { result: change, files } = await readingFiles(agentsDir, known, () => Promise.resolve(server.replaceRegistry(registry)));
      for (const file of files) read.set(file, stampFile(file));
      dependencies = [...read.values()];
      log.info(`reloaded ${shown}: ${describeChange(change)}`);
    } catch (error) {
      keep(errorMessage(error));
    }
  };

  // One reload at a time; changes during one are taken by one more after it.
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const schedule = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await reload().catch((error: unknown) => keep(errorMessage(error)));
      } while (again && !closed);
    })().finally(() => (running = undefined));
  };

  const watcher = await watchFolder(agentsDir, schedule, {
    ignore,
    ...(settings.debounceMs !== undefined ? { debounceMs: settings.debounceMs } : {}),
    ...(settings.loaded !== undefined ? { baseline: settings.loaded } : {}),
    onError: (error) => log.warn(`watching ${shown}: ${error.message}`),
  });
  const polling = setInterval(() => {
    if (running) return;
    const moved = dependencies.filter((stamp) => !sameFiles([stamp]));
    // Through the folder's quiet time: an install still writing, or an edit chokidar also reports, is one reload.
    if (moved.length > 0) watcher.changed(moved.map(([file]) => file));
  }, settings.dependencyPollMs ?? DEPENDENCY_POLL_MS);
  polling.unref();
  return {
    close: async () => {
      closed = true;
      clearInterval(polling);
      await watcher.close();
      await running;
    },
  };
}

function realOrSame(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return folder;
  }
}
