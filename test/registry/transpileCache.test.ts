/**
 * A big folder's first load transpiles in memory and writes jiti's cache in
 * the background (src/registry/transpileCache.ts): the entries are the ones
 * a load reads, so the next load transpiles nothing, and it finds the same
 * definitions and the same problems (a syntax error with its position).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/load.js';
import { DEFER_CACHE_MIN_FILES } from '../../src/registry/transpileCache.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const PROMPTS = DEFER_CACHE_MIN_FILES + 5;

function folder(): string {
  const dir = tempDir('agentport-transpile-cache-');
  const files: Record<string, string> = {
    'models/m.ts': "import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n",
    'prompts/broken.ts': "import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'broken',, model: 'm' });\n",
    'prompts/waits.ts':
      "import { definePrompt } from 'agentport';\nconst text: string = await Promise.resolve('Be brief.');\nexport default definePrompt({ name: 'waits', model: 'm', prompt: text, toolDescription: 'Waits.', exposeAsTool: true });\n",
  };
  for (let i = 0; i < PROMPTS; i++) {
    files[`prompts/p${i}.ts`] =
      `import { definePrompt } from 'agentport';\nimport { z } from 'zod';\nexport default definePrompt({ name: 'p${i}', model: 'm', prompt: 'P${i}.', toolDescription: 'Prompt ${i}.', exposeAsTool: true, requiredSchema: z.object({ text: z.string() }) });\n`;
  }
  writeFiles(dir, files);
  return dir;
}

describe('the transpile cache of a big folder', () => {
  it('is written after the first load, and the next load reads it with the same outcome', async () => {
    const dir = folder();
    const cacheDir = path.join(tempDir('agentport-jiti-'), 'jiti');
    const first = await loadRegistry({ agentsDir: dir, cacheDir });
    expect(first.transpileCacheWritten).toBeDefined();
    const files = PROMPTS + 2;
    expect(await first.transpileCacheWritten).toBe(files);
    const entries = readdirSync(cacheDir).sort();
    // No entry for the file that failed to parse: every other file has one.
    expect(entries).toHaveLength(files);
    expect(entries.some((entry) => entry.startsWith('prompts-broken.'))).toBe(false);

    const warm = await loadRegistry({ agentsDir: dir, cacheDir });
    // Nothing left to write, and nothing was transpiled again: the same entries, and no new ones.
    expect(warm.transpileCacheWritten).toBeUndefined();
    expect(readdirSync(cacheDir).sort()).toEqual(entries);
    expect(warm.issues).toEqual(first.issues);
    const plain = await loadRegistry({ agentsDir: dir, cacheDir: false });
    expect(warm.issues).toEqual(plain.issues);
    expect([...warm.registry.prompts.keys()]).toEqual([...plain.registry.prompts.keys()]);
    expect(warm.registry.prompts.size).toBe(PROMPTS + 1);
    expect(warm.registry.prompts.get('waits')?.systemText).toBe('Be brief.');
    expect(warm.issues.map((issue) => `${issue.file} ${issue.message.split('\n')[0]}`).join('\n')).toMatch(
      /broken\.ts:2:\d+ cannot load: syntax error/,
    );
  }, 60_000);
});
