/**
 * Copies the production dependency tree of a package (its `dependencies`,
 * and the `optionalDependencies` and `peerDependencies` that are installed)
 * from an installation's node_modules into a staging folder, keeping the
 * installation's nesting so every package resolves the same copy it does
 * here. Nothing is fetched: a dependency that is not installed is an error.
 */
import { cpSync, existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** Source maps and TypeScript (sources and declarations): Node never loads them at run time. */
const NOT_RUN = /\.(map|[cm]?ts)$/;

interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function readPackageJson(dir: string): PackageJson | undefined {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
}

/** Node's lookup: `<dir>/node_modules/<name>` from `fromDir` up to the file system root. */
function resolvePackageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

export interface CopyDependenciesOptions {
  /** The package whose dependencies are copied (a folder with package.json). */
  root: string;
  /** The folder that plays `root` in the bundle: copies go to `<into>/node_modules/...`. */
  into: string;
  /** Dependency names of the root not to copy (tools needed only to build, aliased packages). */
  skip?: ReadonlySet<string>;
  /** Called for a dependency of the root that is not installed, instead of failing. */
  onMissing?: (name: string) => void;
}

/** Returns the number of packages copied. */
export function copyProductionDependencies({ root, into, skip = new Set(), onMissing }: CopyDependenciesOptions): number {
  const realRoot = realpathSync(root);
  const placed = new Map<string, string>(); // destination -> source
  const visited = new Set<string>(); // sources whose dependencies were walked
  const queue: Array<{ dir: string; pkg: PackageJson; isRoot: boolean }> = [
    { dir: realRoot, pkg: readPackageJson(realRoot) ?? {}, isRoot: true },
  ];
  while (queue.length) {
    const { dir, pkg, isRoot } = queue.shift()!;
    const wanted: Array<{ name: string; optional: boolean }> = [
      ...Object.keys(pkg.dependencies ?? {}).map((name) => ({ name, optional: false })),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((name) => ({ name, optional: true })),
      ...Object.keys(pkg.peerDependencies ?? {}).map((name) => ({ name, optional: true })),
    ];
    for (const { name, optional } of wanted) {
      if (isRoot && skip.has(name)) continue;
      const source = resolvePackageDir(name, dir);
      if (source === undefined) {
        if (optional) continue;
        if (isRoot && onMissing) {
          onMissing(name);
          continue;
        }
        throw new Error(
          `dependency "${name}" of ${pkg.name ?? dir} is not installed (looked in node_modules from ${dir} up): run npm install first`,
        );
      }
      const destination = path.join(into, bundleRelative(source, realRoot, name));
      const already = placed.get(destination);
      if (already !== undefined && already !== source) {
        throw new Error(
          `two copies of "${name}" (${already} and ${source}) would share ${destination}: reinstall with a flat node_modules`,
        );
      }
      if (already === undefined) {
        placed.set(destination, source);
        const nested = path.join(source, 'node_modules');
        cpSync(source, destination, {
          recursive: true,
          dereference: true,
          // Its own node_modules is walked package by package: dev-only leftovers stay out.
          filter: (file) => file !== nested && !NOT_RUN.test(file),
        });
      }
      if (!visited.has(source)) {
        visited.add(source);
        queue.push({ dir: source, pkg: readPackageJson(source) ?? {}, isRoot: false });
      }
    }
  }
  return placed.size;
}

/**
 * Where a package found at `source` goes, relative to the root's stand-in:
 * its path below the nearest ancestor of the root (the root included) whose
 * node_modules holds it, so nesting is kept and hoisted packages stay hoisted.
 */
function bundleRelative(source: string, root: string, name: string): string {
  for (let dir = root; ; dir = path.dirname(dir)) {
    // A node_modules folder may itself be a link (a shared install): packages are found through its real path.
    const modules = realModules(dir);
    if (modules) {
      const relative = path.relative(modules, source);
      if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) return path.join('node_modules', relative);
    }
    if (path.dirname(dir) === dir) return path.join('node_modules', name); // a linked package outside the tree
  }
}

function realModules(dir: string): string | undefined {
  try {
    return realpathSync(path.join(dir, 'node_modules'));
  } catch {
    return undefined;
  }
}
