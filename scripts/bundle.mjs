// After `tsc` (npm run build): the command (dist/cli/main.js) and the package's entry (dist/index.js) become
// two entries of one bundle, their modules joined into a few chunks beside main.js. A start then loads a
// handful of files instead of about sixty of agentport's modules (docs/benchmarks.md). The two entries share
// the chunks, so a definition's `import ... from 'agentport'` (dist/index.js) meets the very modules the
// command runs. Packages stay where they are (imported from node_modules, one zod for all). tsc's other files
// stay in dist/ for what imports them directly (benchmarks, in-process tests, the transpile worker).
//
// Chunks sit in dist/cli/, two levels below the package root like every file tsc writes there, so paths
// a module works out from its own location (`../../package.json`) hold in the bundle too.
//
// Each module comes in with tsc's source map, so the bundle's maps lead on to the TypeScript in src/: under
// `node --enable-source-maps`, a stack trace names src/*.ts lines.
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const CHUNK = /^chunk-.*\.js(\.map)?$/;

const bundle = await rolldown({
  input: { 'cli/main': path.join(dist, 'cli', 'main.js'), index: path.join(dist, 'index.js') },
  // Packages and Node's own modules are imported as they are.
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  platform: 'node',
  logLevel: 'warn',
  plugins: [
    {
      name: 'tsc-source-maps',
      // A module of dist/ with the map tsc wrote beside it (its sources are relative to the module's folder).
      load(id) {
        if (!id.startsWith(dist + path.sep) || !existsSync(`${id}.map`)) return null;
        return { code: readFileSync(id, 'utf8'), map: readFileSync(`${id}.map`, 'utf8') };
      },
    },
  ],
});
const { output } = await bundle.write({
  dir: dist,
  format: 'esm',
  entryFileNames: '[name].js',
  // A chunk of an earlier bundle (this script run again without tsc) keeps its name, not `chunk-chunk-<name>-<hash>`.
  chunkFileNames: ({ name }) => `cli/chunk-${name.replace(/^chunk-(.*)-[\w-]{8}$/, '$1')}-[hash].js`,
  sourcemap: true,
});
await bundle.close();

// An earlier bundle's chunks, which nothing imports any more (removed after the write: run on its own, this
// script bundles the bundle it wrote last time, whose chunks are its input).
const written = new Set(output.map((file) => path.basename(file.fileName)));
for (const name of readdirSync(path.join(dist, 'cli'))) {
  if (CHUNK.test(name) && !written.has(name)) rmSync(path.join(dist, 'cli', name));
}
