/**
 * Loads agents/ TypeScript and JavaScript without a build step (jiti, no type
 * checking). `agentport` and `@standardagents/spec` both map to this package's
 * own entry, so definition files written against the spec load unchanged and
 * their `definePrompt` is ours; `zod` comes from the user's project when it
 * has one, otherwise from agentport's copy.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Jiti } from 'jiti';

export interface ModuleLoaderOptions {
  agentsDir: string;
  /** Folder for jiti's transpile cache; `false` disables it. */
  cacheDir: string | false;
}

export type ModuleNamespace = Record<string, unknown>;

export interface ModuleLoader {
  load(file: string): Promise<ModuleNamespace>;
}

export async function createModuleLoader(options: ModuleLoaderOptions): Promise<ModuleLoader> {
  // Loaded here so commands that load no TypeScript never pay for jiti, and
  // through require: importing its large CommonJS bundle from ESM makes Node
  // scan it for exports first, which costs more than loading it.
  const { createJiti } = createRequire(import.meta.url)('jiti') as typeof import('jiti');
  const jiti: Jiti = createJiti(import.meta.url, {
    alias: {
      agentport: packageEntry(),
      '@standardagents/spec': packageEntry(),
      zod: resolveZod(options.agentsDir),
    },
    fsCache: options.cacheDir,
    moduleCache: false,
    interopDefault: false,
  });
  return {
    load: (file) => jiti.import<ModuleNamespace>(file),
  };
}

/** The compiled entry (dist/index.js) or, when running from source, src/index.ts. */
function packageEntry(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const compiled = path.join(here, '..', 'index.js');
  return existsSync(compiled) ? compiled : path.join(here, '..', 'index.ts');
}

function resolveZod(agentsDir: string): string {
  try {
    return createRequire(path.join(agentsDir, 'package.json')).resolve('zod');
  } catch {
    return fileURLToPath(import.meta.resolve('zod'));
  }
}
