/**
 * The built command and the package's entry are one bundle (scripts/bundle.mjs): a definition's
 * `import { AgentportError } from 'agentport'` must meet the class the command itself throws and checks, so
 * each module the two share exists once, in a chunk both import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

const DIST = path.join(REPO_ROOT, 'dist');
const bundleFiles = () => [
  path.join(DIST, 'index.js'),
  path.join(DIST, 'cli', 'main.js'),
  ...readdirSync(path.join(DIST, 'cli'))
    .filter((name) => /^chunk-.*\.js$/.test(name))
    .map((name) => path.join(DIST, 'cli', name)),
];

describe('the built bundle', () => {
  it('holds one copy of the modules the command and the package entry share', async () => {
    const defining = bundleFiles().filter((file) => /\bAgentportError = class\b|\bclass AgentportError\b/.test(readFileSync(file, 'utf8')));
    expect(defining).toHaveLength(1);
    const [chunk] = defining as [string];
    expect(path.dirname(chunk)).toBe(path.join(DIST, 'cli'));
    const entry = (await import(pathToFileURL(path.join(DIST, 'index.js')).href)) as { AgentportError: unknown };
    const shared = (await import(pathToFileURL(chunk).href)) as Record<string, unknown>;
    expect(Object.values(shared)).toContain(entry.AgentportError);
    // The command reaches the same chunk.
    const reached = bundleFiles().filter((file) => readFileSync(file, 'utf8').includes(`./${path.basename(chunk)}`));
    expect(reached.length).toBeGreaterThan(0);
  });

  it('keeps no chunk of an earlier build', () => {
    const text = bundleFiles()
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const chunks = bundleFiles().filter((file) => path.basename(file).startsWith('chunk-'));
    for (const chunk of chunks) expect(text).toContain(path.basename(chunk));
  });
});
