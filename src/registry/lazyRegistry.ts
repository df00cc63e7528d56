/**
 * A registry whose definitions are imported on first use. `serve` builds it
 * from its start-up cache (src/server/startupCache/), which lists every
 * definition by kind, name and file: the maps answer `has`, `keys` and
 * `size` from that list at once, and import a definition's file the first
 * time `get` (or iteration) needs it. Before a call the server awaits
 * {@link LazyLoading.prepare}, which imports the called prompt or agent and
 * what it references asynchronously (top-level await works there); a
 * definition read later from elsewhere (a tool's `loadPrompt`) is imported
 * synchronously.
 *
 * The cache is only written for a folder that loaded without errors and is
 * only used while every file is unchanged, so the references were checked
 * when it was written. A file edited after the server started is read as it
 * is then: it is validated again, and its problems are the call's error.
 */
import path from 'node:path';
import type { DefinitionKind } from '../definitions/brand.js';
import { formatIssue, type LoadIssue } from '../definitions/issues.js';
import { log } from '../log.js';
import type { UpstreamConfig } from '../upstream/config.js';
import { dependenciesOf } from './dependencies.js';
import { KIND_FOLDERS } from './discover.js';
import { registryLoadError } from './errors.js';
import { resolveIncludes } from './includes.js';
import { displayPath } from './displayPath.js';
import type { DefinitionMaps } from './load.js';
import type { ModuleLoader, ModuleNamespace } from './loadModule.js';
import type { Entry, LoadedPrompt, Registry, SecretNames } from './types.js';

/** One definition of the folder: where it is, without importing it. */
export interface IndexedDefinition {
  kind: DefinitionKind;
  name: string;
  /** Absolute path of the file that defines it. */
  file: string;
}

export interface LazyRegistryOptions {
  agentsDir: string;
  /** Every definition, in the order a full load finds them. */
  definitions: readonly IndexedDefinition[];
  secretNames: SecretNames;
  upstream?: UpstreamConfig;
  warnings?: LoadIssue[];
  /** Where babel's output is cached (transpile.ts); `false` turns it off. */
  cacheDir: string | false;
}

type Loaded = DefinitionMaps;

/** The module loader and the code that turns a module into definitions, imported together. */
type DefinitionReader = { loader: ModuleLoader } & Pick<typeof import('./load.js'), 'addDefinition' | 'definitionsInModule'> &
  Pick<typeof import('./loadModule.js'), 'moduleLoadIssue'>;

const PREPARED = Promise.resolve();

export function createLazyRegistry(options: LazyRegistryOptions): Registry {
  return new LazyDefinitions(options).registry;
}

class LazyDefinitions {
  readonly registry: Registry;
  private readonly agentsDir: string;
  /** kind -> name -> file. */
  private readonly index = new Map<DefinitionKind, Map<string, string>>();
  private readonly loaded: Loaded = { models: new Map(), prompts: new Map(), tools: new Map(), hooks: new Map(), agents: new Map() };
  /** Prompts with their includes resolved, made on first read. */
  private readonly resolvedPrompts = new Map<string, LoadedPrompt>();
  /** Why a prompt's includes could not be resolved (a file changed since the cache was written). */
  private readonly unresolved = new Map<string, LoadIssue>();
  /** Files imported (or failed), with the issues they gave. */
  private readonly files = new Map<string, LoadIssue[]>();
  private readonly pending = new Map<string, Promise<LoadIssue[]>>();
  /** Names prepared without errors: their files are imported and stay so, so later calls need no walk. */
  private readonly prepared = new Set<string>();
  /** Set once the reader is imported (see reader()). */
  private ready: DefinitionReader | undefined;
  private readerImported: Promise<DefinitionReader> | undefined;

  constructor(private readonly options: LazyRegistryOptions) {
    this.agentsDir = path.resolve(options.agentsDir);
    for (const kind of ['model', 'prompt', 'tool', 'hook', 'agent'] as const) this.index.set(kind, new Map());
    for (const definition of options.definitions) this.index.get(definition.kind)!.set(definition.name, definition.file);
    const map = <V>(kind: DefinitionKind, read: (name: string) => V | undefined) => new LazyMap<V>(this.index.get(kind)!, read);
    this.registry = {
      agentsDir: this.agentsDir,
      models: map('model', (name) => this.read('model', name, this.loaded.models)),
      prompts: map('prompt', (name) => this.prompt(name)),
      tools: map('tool', (name) => this.read('tool', name, this.loaded.tools)),
      hooks: map('hook', (name) => this.read('hook', name, this.loaded.hooks)),
      agents: map('agent', (name) => this.read('agent', name, this.loaded.agents)),
      ...(options.upstream ? { upstream: options.upstream } : {}),
      warnings: options.warnings ?? [],
      lazy: { prepare: (names) => this.prepare(names ?? []), secretNames: options.secretNames },
    };
  }

  /** Every call of a tool comes here first: once its definitions are imported, nothing is left to wait for. */
  private prepare(names: readonly string[]): Promise<void> {
    if (this.ready && names.every((name) => this.prepared.has(name))) return PREPARED;
    return this.importFor(names);
  }

  private async importFor(names: readonly string[]): Promise<void> {
    await this.reader();
    if (names.every((name) => this.prepared.has(name))) return;
    const issues: LoadIssue[] = [];
    const seen = new Set<string>();
    // The named prompts and agents, then what they reference, breadth first.
    type Wanted = { kind: DefinitionKind; name: string };
    let wanted: Wanted[] = names
      .flatMap((name): Wanted[] => [
        { kind: 'agent', name },
        { kind: 'prompt', name },
      ])
      .filter((d) => this.fileOf(d.kind, d.name));
    while (wanted.length) {
      const next: Wanted[] = [];
      for (const { kind, name } of wanted) {
        const key = `${kind}:${name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const file = this.fileOf(kind, name)!;
        issues.push(...(await this.importFile(file)));
        const entry = this.mapOf(kind).get(name);
        if (!entry) continue;
        for (const dependency of dependenciesOf(kind, entry.definition)) {
          const found = dependency.kinds.find((k) => this.fileOf(k, dependency.name));
          if (found) next.push({ kind: found, name: dependency.name });
        }
      }
      wanted = next;
    }
    // Reading the prompts now resolves their includes and says what is missing.
    for (const name of names) {
      if (!this.fileOf('prompt', name) || this.prompt(name)) continue;
      const unresolved = this.unresolved.get(name);
      if (unresolved) issues.push(unresolved);
    }
    if (issues.some((issue) => issue.severity === 'error')) throw registryLoadError(issues);
    for (const name of names) this.prepared.add(name);
  }

  private fileOf(kind: DefinitionKind, name: string): string | undefined {
    return this.index.get(kind)!.get(name);
  }

  private mapOf(kind: DefinitionKind): Map<string, Entry<unknown>> {
    return {
      model: this.loaded.models,
      prompt: this.loaded.prompts,
      tool: this.loaded.tools,
      hook: this.loaded.hooks,
      agent: this.loaded.agents,
    }[kind];
  }

  private read<V>(kind: DefinitionKind, name: string, loaded: Map<string, V>): V | undefined {
    const file = this.fileOf(kind, name);
    if (file === undefined) return undefined;
    if (!this.files.has(file)) this.importFileSync(file);
    return loaded.get(name);
  }

  private prompt(name: string): LoadedPrompt | undefined {
    const done = this.resolvedPrompts.get(name);
    if (done) return done;
    const entry = this.read('prompt', name, this.loaded.prompts);
    if (!entry) return undefined;
    const includes = resolveIncludes(name, (included) => this.read('prompt', included, this.loaded.prompts)?.definition.prompt);
    if (!includes.ok) {
      const message =
        includes.reason === 'cycle'
          ? `circular include: ${includes.chain.join(' -> ')}`
          : `include of unknown prompt "${includes.missing}" (via ${includes.chain.join(' -> ')})`;
      const issue: LoadIssue = { severity: 'error', file: entry.file, definition: name, field: 'prompt', message };
      if (!this.unresolved.has(name)) report([issue]);
      this.unresolved.set(name, issue);
      return undefined;
    }
    const loaded: LoadedPrompt = { ...entry, systemText: includes.text };
    this.resolvedPrompts.set(name, loaded);
    return loaded;
  }

  /** The code that reads definition modules, imported with the first definition: a start from the cache needs none of it. */
  private reader(): Promise<DefinitionReader> {
    this.readerImported ??= (async () => {
      const { addDefinition, definitionsInModule } = await import('./load.js');
      const { createModuleLoader, moduleLoadIssue } = await import('./loadModule.js');
      const loader = await createModuleLoader({ agentsDir: this.agentsDir, cacheDir: this.options.cacheDir });
      return (this.ready = { loader, addDefinition, definitionsInModule, moduleLoadIssue });
    })();
    return this.readerImported;
  }

  private importFile(file: string): Promise<LoadIssue[]> {
    const done = this.files.get(file);
    if (done) return Promise.resolve(done);
    let pending = this.pending.get(file);
    if (!pending) {
      pending = this.reader()
        .then((reader) =>
          reader.loader.load(file).then(
            (namespace) => this.add(reader, file, namespace),
            (error: unknown) => this.failed(reader, file, error),
          ),
        )
        .finally(() => this.pending.delete(file));
      this.pending.set(file, pending);
    }
    return pending;
  }

  private importFileSync(file: string): void {
    const reader = this.ready;
    if (!reader) throw new Error(`${displayPath(file)} is needed before the definitions were prepared (LazyLoading.prepare)`);
    let namespace: ModuleNamespace;
    try {
      namespace = reader.loader.loadSync(file);
    } catch (error) {
      report(this.failed(reader, file, error));
      return;
    }
    report(this.add(reader, file, namespace));
  }

  private add({ addDefinition, definitionsInModule }: DefinitionReader, file: string, namespace: ModuleNamespace): LoadIssue[] {
    // Imported meanwhile by the other path: the first result stands.
    const done = this.files.get(file);
    if (done) return done;
    const issues: LoadIssue[] = [];
    const shown = displayPath(file);
    const folder = path.relative(this.agentsDir, file).split(path.sep)[0] ?? '';
    const folderKind = Object.hasOwn(KIND_FOLDERS, folder) ? KIND_FOLDERS[folder]! : 'prompt';
    for (const item of definitionsInModule(namespace, folderKind, shown, issues)) addDefinition(this.loaded, item, file, shown, issues);
    // Warnings were shown when the cache was written; only a file changed since then has news.
    const errors = issues.filter((issue) => issue.severity === 'error');
    this.files.set(file, errors);
    return errors;
  }

  private failed({ moduleLoadIssue }: DefinitionReader, file: string, error: unknown): LoadIssue[] {
    const issues = [moduleLoadIssue(error, file, displayPath(file), displayPath)];
    this.files.set(file, issues);
    return issues;
  }
}

function report(issues: readonly LoadIssue[]): void {
  for (const issue of issues) log.error(formatIssue(issue));
}

/**
 * A read-only map over every name of one kind: `has`, `keys` and `size` come
 * from the index; reading a value imports its file. Iterating values imports
 * them all, as a full load would have.
 */
class LazyMap<V> implements ReadonlyMap<string, V> {
  constructor(
    private readonly names: ReadonlyMap<string, string>,
    private readonly read: (name: string) => V | undefined,
  ) {}

  get size(): number {
    return this.names.size;
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  get(name: string): V | undefined {
    return this.names.has(name) ? this.read(name) : undefined;
  }

  keys(): MapIterator<string> {
    return this.names.keys();
  }

  values(): MapIterator<V> {
    return this.all().values();
  }

  entries(): MapIterator<[string, V]> {
    return this.all().entries();
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void, thisArg?: unknown): void {
    this.all().forEach((value, key) => callback.call(thisArg, value, key, this));
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  private all(): Map<string, V> {
    const all = new Map<string, V>();
    for (const name of this.names.keys()) {
      const value = this.read(name);
      if (value !== undefined) all.set(name, value);
    }
    return all;
  }
}
