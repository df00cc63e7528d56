/**
 * Where this agentport is installed, found by looking upwards from the running module for the package.json named
 * `agentport-mcp`: the same answer from a source file, from the file tsc wrote for it, and from the bundle's chunk
 * that holds it (scripts/bundle.mjs), which sit at different depths below the root.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'agentport-mcp';

/** The installation's folder (links resolved), or undefined when no package.json above this module is agentport's. */
export function installationRoot(): string | undefined {
  const root = rootAsLoaded();
  return root === undefined ? undefined : realpathSync(root);
}

/**
 * The installation's folder by each path it is known by: as this module was loaded (through a link, under
 * `--preserve-symlinks`), and with links resolved. None when no package.json above this module is agentport's.
 */
export function installationPaths(): string[] {
  const root = rootAsLoaded();
  return root === undefined ? [] : [...new Set([root, realpathSync(root)])];
}

/** The folder of the package.json named agentport-mcp above this module, by the path the module was loaded from. */
function rootAsLoaded(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME) return dir;
      } catch {
        // Not ours: keep looking upwards.
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The installation's folder; an installation without its package.json is broken, and said to be. */
export function requireInstallationRoot(): string {
  const root = installationRoot();
  if (root === undefined)
    throw new Error(`agentport's package.json (${PACKAGE_NAME}) was not found above ${fileURLToPath(import.meta.url)}`);
  return root;
}

/**
 * A module of agentport as a file Node or a worker can load: the compiled one under dist/ when this code runs
 * compiled (bundled or not), else the source file (tests run the sources).
 * @param relative the path under src/ or dist/ without its extension, e.g. `registry/transpile`
 */
export function moduleFile(relative: string): string {
  const compiled = fileURLToPath(import.meta.url).endsWith('.js');
  return path.join(requireInstallationRoot(), compiled ? 'dist' : 'src', `${relative}${compiled ? '.js' : '.ts'}`);
}
