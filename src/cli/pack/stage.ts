/**
 * Lays out an MCP Bundle folder:
 *
 *   manifest.json
 *   server/        agentport's package.json and dist/
 *   agents/        the agents folder (with its own production dependencies, if it declares any)
 *   node_modules/  agentport's production dependencies, copied from this installation
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { requireInstallationRoot } from '../../installation.js';
import { PACKAGE_SPECIFIERS } from '../../registry/loadModule.js';
import { copyProductionDependencies, readPackageJson } from './dependencies.js';
import { BUNDLE_AGENTS } from './manifest.js';

/** Needed to build a bundle, not to run one. */
const BUILD_ONLY = new Set(['@anthropic-ai/mcpb']);

export interface StageResult {
  packages: number;
}

export function stageBundle(options: { stageDir: string; agentsDir: string; manifest: unknown }): StageResult {
  const root = requireInstallationRoot();
  const { stageDir, agentsDir } = options;
  mkdirSync(stageDir, { recursive: true });

  // server/: package.json (for "type": "module" and the version) and the compiled code.
  const pkg = readPackageJson(root) as Record<string, unknown> & { dependencies?: Record<string, string> };
  const dependencies = Object.fromEntries(Object.entries(pkg.dependencies ?? {}).filter(([name]) => !BUILD_ONLY.has(name)));
  const { scripts: _scripts, devDependencies: _dev, ...kept } = pkg;
  mkdirSync(path.join(stageDir, 'server'), { recursive: true });
  writeFileSync(path.join(stageDir, 'server', 'package.json'), `${JSON.stringify({ ...kept, dependencies }, null, 2)}\n`);
  cpSync(path.join(root, 'dist'), path.join(stageDir, 'server', 'dist'), {
    recursive: true,
    filter: (file) => !file.endsWith('.map') && !file.endsWith('.d.ts'),
  });

  // agents/: everything but installed packages, data and dot folders.
  const agentsTarget = path.join(stageDir, BUNDLE_AGENTS);
  cpSync(agentsDir, agentsTarget, {
    recursive: true,
    filter: (file) => {
      const relative = path.relative(agentsDir, file);
      if (relative === '') return true;
      const first = relative.split(path.sep)[0]!;
      return first !== 'node_modules' && !first.startsWith('.');
    },
  });

  // node_modules/ beside server/: found by Node's lookup from server/dist and from agents/.
  let packages = copyProductionDependencies({ root, into: stageDir, skip: BUILD_ONLY });
  // The agents folder's own dependencies (agentport itself is aliased when loading, so not copied).
  if (readPackageJson(agentsDir)?.dependencies) {
    packages += copyProductionDependencies({
      root: agentsDir,
      into: agentsTarget,
      skip: new Set(PACKAGE_SPECIFIERS),
      // zod not installed there: agentport's own copy serves the definitions, as it does when serving.
      onMissing: (name) =>
        name !== 'zod' &&
        process.stderr.write(
          `agentport: ${name} (a dependency of ${agentsDir}) is not installed; not bundled (run npm install there if its tools need it)\n`,
        ),
    });
  }

  writeFileSync(path.join(stageDir, 'manifest.json'), `${JSON.stringify(options.manifest, null, 2)}\n`);
  return { packages };
}
