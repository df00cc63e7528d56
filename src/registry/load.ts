/**
 * Builds a {@link Registry} from an agents/ folder: discover files, import
 * them, validate every definition, then check cross-references. Every problem
 * is collected; the caller decides whether errors are fatal.
 */
import path from 'node:path';
import { kindOf, type DefinitionKind } from '../definitions/brand.js';
import type { LoadIssue } from '../definitions/issues.js';
import type { AgentDefinition, HookDefinition, ModelDefinition, PromptDefinition } from '../definitions/types.js';
import { normalizeAgent } from '../definitions/normalize.js';
import { validateDefinition } from '../definitions/validate.js';
import { discoverDefinitionFiles, type DiscoveredFile } from './discover.js';
import { displayPath } from './displayPath.js';
import { registryLoadError } from './errors.js';
import { LoadFailures } from './failures.js';
import { createModuleLoader, moduleLoadIssue, type ModuleLoader } from './loadModule.js';
import { checkReferences } from './references.js';
import { TRANSPILE_AHEAD_MIN_FILES, startTranspiler, type Transpiler } from './transpileAhead.js';
import type { AnyToolDefinition, Entry, Registry } from './types.js';
import type { LoadedPrompty } from '../prompty/types.js';
import { loadUpstreamConfig } from '../upstream/config.js';

export interface LoadRegistryOptions {
  agentsDir: string;
  /** Where babel's output is cached (transpile.ts); `false` turns the cache off. */
  cacheDir?: string | false;
  /** Where `${env:...}` in agents/mcp.json is looked up (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Loading again in the same process (serve --watch): every file's current contents are imported. */
  fresh?: boolean;
  /** Folders inside the agents folder that hold no definitions (the data folder, when it lies there): not read. */
  leaveOut?: readonly string[];
  /** The folder's definition files, when the caller has just discovered them (a big folder's walk is not repeated). */
  files?: readonly DiscoveredFile[];
  /** Told each module file the load runs or transpiles, and each file it depends on that Node reads itself (ModuleLoaderOptions.onRead). */
  onRead?: (file: string) => void;
}

export interface LoadRegistryResult {
  registry: Registry;
  issues: LoadIssue[];
}

export interface Found {
  kind: DefinitionKind;
  value: unknown;
  /** The export's name, or undefined for the default export. */
  exportName: string | undefined;
}

export async function loadRegistry(options: LoadRegistryOptions): Promise<LoadRegistryResult> {
  const agentsDir = path.resolve(options.agentsDir);
  const files = options.files ?? (await discoverDefinitionFiles(agentsDir, options.leaveOut));
  const moduleFiles = files.filter((f) => f.format === 'module');
  // A big folder: transpiled ahead on a worker.
  const typescript = moduleFiles.map((f) => f.file).filter((file) => /\.m?ts$/.test(file));
  const transpiler = typescript.length >= TRANSPILE_AHEAD_MIN_FILES ? startTranspiler(typescript) : undefined;
  try {
    return await loadFiles(options, agentsDir, files, transpiler);
  } finally {
    // Every module is loaded: the worker's core is free for the rest.
    transpiler?.stop();
  }
}

async function loadFiles(
  options: LoadRegistryOptions,
  agentsDir: string,
  files: readonly DiscoveredFile[],
  transpiler: Transpiler | undefined,
): Promise<LoadRegistryResult> {
  const issues: LoadIssue[] = [];
  for (const linked of files.filter((f) => f.format === 'link')) {
    issues.push({
      severity: 'warning',
      file: displayPath(linked.file),
      message: 'is a symbolic link, which is not loaded: put the file itself in the agents folder (a link to the whole folder works)',
    });
  }
  // What failed, so references to it say why instead of "unknown".
  const failures = new LoadFailures();
  const moduleFiles = files.filter((f) => f.format === 'module');
  const loader = moduleFiles.length
    ? await createModuleLoader({
        agentsDir,
        cacheDir: options.cacheDir ?? false,
        ...(options.fresh ? { fresh: true } : {}),
        ...(transpiler ? { transpiler } : {}),
        ...(options.onRead ? { onRead: options.onRead } : {}),
      })
    : undefined;

  const draft = {
    agentsDir,
    models: new Map<string, Entry<ModelDefinition>>(),
    prompts: new Map<string, Entry<PromptDefinition>>(),
    tools: new Map<string, Entry<AnyToolDefinition>>(),
    hooks: new Map<string, Entry<HookDefinition>>(),
    agents: new Map<string, Entry<AgentDefinition>>(),
    warnings: [] as LoadIssue[],
    // Upstream MCP servers (agents/mcp.json), read before references are checked.
    upstream: await loadUpstreamConfig(agentsDir, issues, options.env),
  };

  for (const discovered of moduleFiles) {
    const file = displayPath(discovered.file);
    const found = await importDefinitions(loader!, discovered, file, issues, failures);
    for (const item of found) addDefinition(draft, item, discovered.file, file, issues, failures);
  }
  transpiler?.stop();

  const promptyTemplates = new Map<string, LoadedPrompty>();
  const promptyFiles = files.filter((f) => f.format === 'prompty');
  if (promptyFiles.length) {
    const { loadPromptyPrompt } = await import('./promptyFiles.js');
    const sources: Array<{ prompty: LoadedPrompty; file: string }> = [];
    for (const discovered of promptyFiles) {
      const file = displayPath(discovered.file);
      const loaded = await loadPromptyPrompt(discovered.file, file, agentsDir, issues, failures);
      if (!loaded) {
        failures.failedFile(discovered.file, file);
        continue;
      }
      if (loaded.inlineModel)
        addDefinition(draft, { kind: 'model', value: loaded.inlineModel, exportName: undefined }, discovered.file, file, issues, failures);
      if (
        addDefinition(draft, { kind: 'prompt', value: loaded.definition, exportName: undefined }, discovered.file, file, issues, failures)
      ) {
        promptyTemplates.set(loaded.definition.name, loaded.prompty);
        sources.push({ prompty: loaded.prompty, file });
      }
    }
    // Body tools sections name (and define) tools: checked once every definition is known.
    const { bindPromptyTools } = await import('./promptyTools.js');
    for (const [name, prompty] of bindPromptyTools(draft, sources, issues)) promptyTemplates.set(name, prompty);
  }

  const prompts = checkReferences(draft, issues, failures);
  for (const [name, prompty] of promptyTemplates) {
    const prompt = prompts.get(name);
    if (prompt) prompt.prompty = prompty;
  }
  const registry: Registry = { ...draft, prompts, warnings: issues.filter((i) => i.severity === 'warning') };
  return { registry, issues };
}

/**
 * Loads the registry and throws an AgentportError with code
 * `DEFINITION_INVALID` listing every issue (`data.issues`) when there are errors.
 */
export async function loadRegistryOrThrow(options: LoadRegistryOptions): Promise<Registry> {
  const { registry, issues } = await loadRegistry(options);
  if (issues.some((i) => i.severity === 'error')) throw registryLoadError(issues);
  return registry;
}

async function importDefinitions(
  loader: ModuleLoader,
  discovered: DiscoveredFile,
  file: string,
  issues: LoadIssue[],
  failures: LoadFailures,
): Promise<Found[]> {
  let namespace: Record<string, unknown>;
  try {
    namespace = await loader.load(discovered.file);
  } catch (error) {
    // A syntax error names its line and column, with a code frame.
    issues.push(moduleLoadIssue(error, discovered.file, file, displayPath));
    failures.failedFile(discovered.file, file);
    return [];
  }
  return definitionsInModule(namespace, discovered.kind, file, issues);
}

/** The definitions a module exports; `folderKind` is what an unbranded default export is taken as. */
export function definitionsInModule(
  namespace: Record<string, unknown>,
  folderKind: DefinitionKind,
  file: string,
  issues: LoadIssue[],
): Found[] {
  const found: Found[] = [];
  // In name order, as an ES module's namespace lists them (whichever transform made the module).
  for (const [exportName, value] of Object.entries(namespace).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const branded = kindOf(value);
    if (exportName === 'default') {
      // An unbranded default export is taken as the folder's kind, so plain objects work too.
      if (branded || (typeof value === 'object' && value !== null)) {
        found.push({ kind: branded ?? folderKind, value, exportName: undefined });
      }
    } else if (branded && value !== namespace.default) {
      found.push({ kind: branded, value, exportName });
    }
  }
  if (found.length === 0) {
    issues.push({ severity: 'warning', file, message: 'exports no definition (expected a default export such as definePrompt({...}))' });
  }
  return found;
}

/** Definitions by kind and name, as files are loaded. */
export interface DefinitionMaps {
  models: Map<string, Entry<ModelDefinition>>;
  prompts: Map<string, Entry<PromptDefinition>>;
  tools: Map<string, Entry<AnyToolDefinition>>;
  hooks: Map<string, Entry<HookDefinition>>;
  agents: Map<string, Entry<AgentDefinition>>;
}

/** Validates one definition and adds it to `draft`; false (with issues) when it is rejected. */
export function addDefinition(
  draft: DefinitionMaps,
  item: Found,
  absoluteFile: string,
  file: string,
  issues: LoadIssue[],
  failures?: LoadFailures,
): boolean {
  const name = definitionName(item, absoluteFile);
  const outcome = validateDefinition(item.kind, item.value, file, name);
  issues.push(...outcome.issues);
  if (!outcome.ok && name !== undefined) failures?.rejectDefinition(item.kind, name, file, item.value);
  if (!outcome.ok || name === undefined) return false;
  let definition = item.value;
  if (item.kind === 'agent') {
    // Deprecated side fields are stored under their new names: the runtime reads only those.
    const normalized = normalizeAgent(item.value as AgentDefinition, file);
    issues.push(...normalized.issues);
    if (!normalized.definition) {
      failures?.rejectDefinition(item.kind, name, file, item.value);
      return false;
    }
    definition = normalized.definition;
  }

  const target = {
    model: draft.models,
    prompt: draft.prompts,
    tool: draft.tools,
    hook: draft.hooks,
    agent: draft.agents,
  }[item.kind] as Map<string, Entry<unknown>>;
  const existing = target.get(name);
  if (existing) {
    issues.push({
      severity: 'error',
      file,
      definition: name,
      field: item.kind === 'hook' ? 'id' : 'name',
      message: `duplicate ${item.kind} "${name}" (also defined in ${existing.file})`,
    });
    return false;
  }
  target.set(name, { name, file, definition });
  return true;
}

/** Tools are named by their file (default export) or export name; the rest carry a name or id. */
function definitionName(item: Found, absoluteFile: string): string | undefined {
  if (item.kind === 'tool') {
    return item.exportName ?? path.basename(absoluteFile).replace(/\.(ts|mts|js|mjs)$/, '');
  }
  const value = item.value as { name?: unknown; id?: unknown };
  const raw = item.kind === 'hook' ? value.id : value.name;
  return typeof raw === 'string' && raw.trim() ? raw : undefined;
}
