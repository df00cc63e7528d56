/**
 * How `serve` loads the agents folder: from the start-up cache when the
 * folder has not changed since a clean load (definitions are then imported
 * on first use), otherwise in full, saving the cache for the next start when
 * the folder loaded without errors. See docs/architecture.md, "Start-up cache".
 */
import path from 'node:path';
import type { LoadIssue } from '../definitions/issues.js';
import { log } from '../log.js';
import { createLazyRegistry } from '../registry/lazyRegistry.js';
import { displayPath } from '../registry/displayPath.js';
import { TRANSPILE_CACHE_FOLDER } from '../registry/transpileCacheFolder.js';
import { damagedLine, readStartupCache, type StartupCache, startupCachePath, writeStartupCache } from '../server/startupCache/cacheFile.js';
import { beyondTheWalk, outsideTheWalk, startupCacheOf } from '../server/startupCache/build.js';
import { readingEnvironment } from '../server/startupCache/environment.js';
import { readingFiles } from '../server/startupCache/fileReads.js';
import { savedSearchIndex } from '../server/startupCache/searchIndexFile.js';
import { stampFile, stampFolder, type FileStamp } from '../server/startupCache/stamps.js';
import { searchIsOn, type SavedSearchIndex, type ToolSearchSettings } from '../server/toolSearchSurface.js';
import { buildToolCatalog, type ExposedTool } from '../server/toolCatalog.js';
import { UPSTREAM_CONFIG_FILE } from '../upstream/configFile.js';
import { agentsDirOf, cacheDirOf, dataDirOf, loadForCommand, type DirOptions, type LoadedForCommand } from './context.js';

export interface LoadedForServe extends LoadedForCommand {
  /** The tool catalogue when it is already built (read from the cache, or built here to save it). */
  tools?: ExposedTool[];
  /** `hit`: served from the start-up cache; `miss`: loaded in full. */
  startupCache: 'hit' | 'miss';
  /** Where the search index of `tools` is kept between starts, when they come with a start-up cache. */
  savedSearchIndex?: SavedSearchIndex;
  /** The folder's files as they were before it was read (what `--watch` compares against once it watches). */
  stamps: FileStamp[];
  /**
   * With `deferCacheWrite`, after a full load that can be cached: writes the start-up cache (once; later calls do
   * nothing). `serve` calls it once it answers, so a first start's answers do not wait for the write.
   */
  saveStartupCache?: () => void;
  /**
   * Files the load read or depended on that the folder's walk does not see (helpers outside it or in a dot-folder,
   * packages' manifests), by absolute path, as they were when read: `--watch` looks at them too.
   */
  dependencies: FileStamp[];
}

export interface ServeLoadOptions extends DirOptions {
  /** Where `${env:...}` is looked up (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Whether the start reads every tool's input schema (tool search off) or only the always-loaded ones'. */
  searchSettings?: ToolSearchSettings;
  exposeUpstream?: boolean | undefined;
  /** Leave the start-up cache's writing to the caller (`saveStartupCache`) instead of writing it before returning. */
  deferCacheWrite?: boolean;
}

export async function loadForServe(options: ServeLoadOptions): Promise<LoadedForServe> {
  const agentsDir = agentsDirOf(options);
  const dataDir = dataDirOf(options);
  const transpileCache = path.join(cacheDirOf(options), TRANSPILE_CACHE_FOLDER);
  const cacheFile = startupCachePath(dataDir);
  // Stamped before loading: a file changed during the load makes the saved cache stale, never wrong.
  const stamps = stampFolder(agentsDir, [dataDir]);
  const upstreamFile = displayPath(path.join(agentsDir, UPSTREAM_CONFIG_FILE));

  const cached = usableCache(readStartupCache(cacheFile, agentsDir, stamps), options);
  if (cached) {
    // mcp.json is read at every start: its ${env:} values are not cached. Its reader is loaded only when it is there.
    const issues: LoadIssue[] = [];
    const upstream = stamps.some(([file]) => file === UPSTREAM_CONFIG_FILE)
      ? await (await import('../upstream/config.js')).loadUpstreamConfig(agentsDir, issues, options.env)
      : undefined;
    issues.push(...cached.warnings);
    const registry = createLazyRegistry({
      agentsDir,
      definitions: cached.definitions.map(([kind, name, file]) => ({ kind, name, file: inFolder(agentsDir, cached.files[file]![0]) })),
      secretNames: cached.secretNames,
      ...(upstream ? { upstream } : {}),
      warnings: issues.filter((issue) => issue.severity === 'warning'),
      cacheDir: transpileCache,
    });
    return {
      registry,
      issues,
      errors: issues.filter((i) => i.severity === 'error'),
      tools: cached.tools,
      startupCache: 'hit',
      stamps,
      dependencies: cached.read,
      ...(cached.id ? { savedSearchIndex: savedSearchIndex(dataDir, cached.id) } : {}),
    };
  }

  // Only a folder without a cache of its own is checked (loadForCommand): a cached one passed these checks and has not changed.
  // Each file the load runs or transpiles, stamped when read, and each module Node loads itself and what stands for the
  // packages the load uses (importTrace.ts), stamped before Node reads them: the cache is stale when one changes (stamps.ts).
  // A file the walk stamped (by the path the walk gave) is keyed by that stamp, taken before the load: stamping it
  // again when read would only cost a stat a file (10,000 of them at 10,000 definitions).
  const walked = new Set(stamps.map(([file]) => inFolder(agentsDir, file)));
  const read = new Map<string, FileStamp>();
  const onRead = (file: string) => {
    if (!walked.has(file) && !read.has(file)) read.set(file, stampFile(file));
  };
  // The environment variables the definitions read are part of the cache's key too (environment.ts), and so are the
  // files they read themselves with node:fs (fileReads.ts): watched while they load and while the catalogue is built
  // (a lazy schema, say, is evaluated only then).
  const { result, environment } = await readingEnvironment(agentsDir, async () => {
    const known = (file: string) => walked.has(file) || read.has(file);
    const { result: loaded, files } = await readingFiles(agentsDir, known, async () => {
      const full = await loadForCommand(options, { onRead, ...(options.env ? { env: options.env } : {}) });
      if (full.errors.length) return { full };
      try {
        return { full, tools: buildToolCatalog(full.registry) };
      } catch {
        // An unreadable icon: the server reports it when it builds the catalogue itself.
        return { full };
      }
    });
    // Stamped as the load left them (fileReads.ts).
    for (const file of files) read.set(file, stampFile(file));
    return loaded;
  });
  const { registry, issues, errors } = result.full;
  const { tools } = result;
  if (errors.length || !tools)
    return { registry, issues, errors, startupCache: 'miss', stamps, dependencies: outsideTheWalk(stamps, read) };
  // What `--watch` looks at beyond the walk, icons included (as after a start from the cache, which holds the same list).
  const dependencies = beyondTheWalk(registry, stamps, read);
  // Made now, with the stamps of the files it names taken as they are now (an icon outside the walk, say): only the
  // writing waits. The id is chosen here, so the search index built meanwhile can be saved under it first.
  const content = startupCacheOf(
    registry,
    stamps,
    tools,
    issues.filter((i) => i.severity === 'warning' && i.file !== upstreamFile),
    dependencies,
    environment,
  );
  const loaded = { registry, issues, errors, tools, startupCache: 'miss' as const, stamps, dependencies };
  if (!content) return loaded;
  const id = crypto.randomUUID();
  let pending = true;
  const save = (): void => {
    if (!pending) return;
    pending = false;
    try {
      writeStartupCache(cacheFile, agentsDir, content, id);
    } catch (error) {
      log.warn(
        `start-up cache not saved (${error instanceof Error ? error.message : String(error)}): the next start loads the folder in full again`,
      );
    }
  };
  const withIndex = { ...loaded, savedSearchIndex: savedSearchIndex(dataDir, id) };
  if (options.deferCacheWrite) return { ...withIndex, saveStartupCache: save };
  save();
  return withIndex;
}

/**
 * The cache, unless one of the lines the start reads is damaged: every tool's with tool search off, the always-loaded
 * tools' with it on. The folder then loads in full, as it does with no cache, rather than the start failing on that
 * line. A damaged line read later leaves its tool out of the search index (toolSearchSurface.ts) and of prompts/list.
 */
function usableCache(cached: StartupCache | undefined, options: ServeLoadOptions): StartupCache | undefined {
  if (!cached) return undefined;
  const { searchSettings } = options;
  const searchOn = options.exposeUpstream === true || (searchSettings !== undefined && searchIsOn(cached.tools.length, searchSettings));
  // With tool search on, the start lists only the tools loaded at all times (alwaysLoad) in full.
  const damaged = damagedLine(searchOn ? cached.tools.filter((tool) => tool.alwaysLoad) : cached.tools);
  if (damaged === undefined) return cached;
  log.warn(`${damaged}; loading the folder in full now`);
  return undefined;
}

/**
 * The absolute path of a stamped file (stamps.ts: `/`-separated, relative, made of the names a listing gave, so with
 * no `.` or `..` to resolve): a concatenation rather than path.join, whose normalising cost a 10,000-file warm start
 * about 20 ms.
 */
function inFolder(agentsDir: string, relative: string): string {
  const native = path.sep === '/' ? relative : relative.replaceAll('/', path.sep);
  return agentsDir.endsWith(path.sep) ? `${agentsDir}${native}` : `${agentsDir}${path.sep}${native}`;
}
