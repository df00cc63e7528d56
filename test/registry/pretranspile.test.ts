/**
 * Transpiling on worker threads (src/registry/pretranspile.ts) fills the
 * cache the load reads: the load then transpiles nothing, and finds the same
 * definitions and the same problems (a syntax error with its position) as a
 * load without it.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/load.js';
import { transpileOnWorkers } from '../../src/registry/pretranspile.js';
import { tempDir } from '../support/mcpClients.js';

function folder(): string {
  const dir = tempDir('agentport-pretranspile-');
  const files: Record<string, string> = {
    'models/m.ts': "import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n",
    'prompts/broken.ts': "import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'broken',, model: 'm' });\n",
    'prompts/waits.ts':
      "import { definePrompt } from 'agentport';\nconst text: string = await Promise.resolve('Be brief.');\nexport default definePrompt({ name: 'waits', model: 'm', prompt: text, toolDescription: 'Waits.', exposeAsTool: true });\n",
  };
  for (let i = 0; i < 6; i++) {
    files[`prompts/p${i}.ts`] =
      `import { definePrompt } from 'agentport';\nimport { z } from 'zod';\nexport default definePrompt({ name: 'p${i}', model: 'm', prompt: 'P${i}.', toolDescription: 'Prompt ${i}.', exposeAsTool: true, requiredSchema: z.object({ text: z.string() }) });\n`;
  }
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

function moduleFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

describe('transpiling on worker threads', () => {
  it('fills the cache the load reads, with the same outcome as a load without it', async () => {
    const dir = folder();
    const cacheDir = path.join(tempDir('agentport-jiti-'), 'jiti');
    const files = moduleFiles(dir);
    expect(await transpileOnWorkers(files, cacheDir, 2)).toBe(files.length);
    const entries = readdirSync(cacheDir).sort();
    // jiti caches no file that failed to parse: every other file has its entry.
    expect(entries).toHaveLength(files.length - 1);
    expect(entries.some((entry) => entry.startsWith('prompts-broken.'))).toBe(false);

    const warm = await loadRegistry({ agentsDir: dir, cacheDir });
    // Nothing was transpiled again: the same entries, and no new ones.
    expect(readdirSync(cacheDir).sort()).toEqual(entries);
    const plain = await loadRegistry({ agentsDir: dir, cacheDir: false });
    expect(warm.issues).toEqual(plain.issues);
    expect([...warm.registry.prompts.keys()]).toEqual([...plain.registry.prompts.keys()]);
    expect([...warm.registry.prompts.keys()]).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'waits']);
    expect(warm.registry.prompts.get('waits')?.systemText).toBe('Be brief.');
    expect(warm.issues.map((issue) => `${issue.file} ${issue.message.split('\n')[0]}`).join('\n')).toMatch(
      /broken\.ts:2:\d+ cannot load: syntax error/,
    );
  }, 60_000);
});
