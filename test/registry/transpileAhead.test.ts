/**
 * A big folder's load takes its files transpiled ahead on a worker
 * (src/registry/transpileAhead.ts): it finds the same definitions and the
 * same problems (a syntax error with its position) as a load without the
 * worker, and only babel's output goes to the cache. The load takes the
 * source the worker read rather than reading the file again.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/load.js';
import { createModuleLoader } from '../../src/registry/loadModule.js';
import { sucraseTransform } from '../../src/registry/transpile.js';
import { TRANSPILE_AHEAD_MIN_FILES, startTranspiler, type Transpiler } from '../../src/registry/transpileAhead.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const PROMPTS = TRANSPILE_AHEAD_MIN_FILES + 5;

function folder(): string {
  const dir = tempDir('agentport-transpile-cache-');
  const files: Record<string, string> = {
    'models/m.ts': "import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n",
    'prompts/broken.ts': "import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'broken',, model: 'm' });\n",
    // Goes to babel (a namespace): loaded by the load itself, its output cached.
    'prompts/spaced.ts':
      "import { definePrompt } from 'agentport';\nnamespace Texts { export const text = 'Spaced.'; }\nexport default definePrompt({ name: 'spaced', model: 'm', prompt: Texts.text, toolDescription: 'Spaced.' });\n",
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

describe('transpiling a big folder ahead', () => {
  it('loads what a load without the worker loads, and caches only what babel transpiled', async () => {
    const dir = folder();
    const cacheDir = path.join(tempDir('agentport-babel-'), 'babel');
    const ahead = await loadRegistry({ agentsDir: dir, cacheDir });
    // A shared helper of the folder, a namespace file: babel's output, cached once.
    expect(readdirSync(cacheDir)).toHaveLength(1);
    const again = await loadRegistry({ agentsDir: dir, cacheDir });
    expect(readdirSync(cacheDir)).toHaveLength(1);
    expect(again.issues).toEqual(ahead.issues);

    // Below the threshold no worker runs: the same folder, minus most prompts, loads the same way per file.
    const plain = await loadRegistry({ agentsDir: dir, cacheDir: false });
    expect(ahead.issues).toEqual(plain.issues);
    expect([...ahead.registry.prompts.keys()]).toEqual([...plain.registry.prompts.keys()]);
    expect(ahead.registry.prompts.size).toBe(PROMPTS + 2);
    expect(ahead.registry.prompts.get('waits')?.systemText).toBe('Be brief.');
    expect(ahead.registry.prompts.get('spaced')?.systemText).toBe('Spaced.');
    expect(ahead.registry.prompts.get('p7')?.systemText).toBe('P7.');
    expect(ahead.issues.map((issue) => `${issue.file} ${issue.message.split('\n')[0]}`).join('\n')).toMatch(
      /broken\.ts:2:\d+ cannot load: syntax error/,
    );
  }, 60_000);

  it("takes the worker's read of a file: the file is not read again, and one the worker did not send is", async () => {
    const dir = tempDir('agentport-transpile-taken-');
    const sent = path.join(dir, 'prompts', 'sent.ts');
    const unsent = path.join(dir, 'prompts', 'unsent.ts');
    writeFiles(dir, { 'prompts/unsent.ts': "export const text = 'read by the load';\n" });
    // What the worker read of `sent` before the file went away (no file is there now).
    const source = "export const text: string = 'read by the worker';\n";
    const code = sucraseTransform({ filename: sent, source, ts: true, async: true, interopDefault: false }, { checked: false })!;
    const asked: string[] = [];
    const transpiler: Transpiler = {
      take: (filename) => {
        asked.push(path.basename(filename));
        return filename === sent ? { source, code } : undefined;
      },
      finished: () => true,
      stop: () => {},
    };
    const loader = await createModuleLoader({ agentsDir: dir, cacheDir: false, transpiler });
    expect((await loader.load(sent)).text).toBe('read by the worker');
    expect((await loader.load(unsent)).text).toBe('read by the load');
    expect(asked).toEqual(['sent.ts', 'unsent.ts']);
  });

  it('never starts on a file the load has reached: it works ahead of wherever the load is', async () => {
    const dir = tempDir('agentport-transpile-follow-');
    const names = Array.from({ length: 300 }, (_, i) => `prompts/f${i}.ts`);
    writeFiles(dir, Object.fromEntries(names.map((name, i) => [name, `export const n: number = ${i};\n`])));
    const files = names.map((name) => path.join(dir, name));
    const transpiler = startTranspiler(files);
    try {
      // The load goes through the first hundred while the worker is still starting. Files jiti transforms that are
      // not the load's (a helper the definitions import, again and again) do not move it on.
      for (const file of files.slice(0, 100)) transpiler.take(file, true);
      for (let i = 0; i < 250; i++) transpiler.take(path.join(dir, 'helper.ts'), true);
      for (const started = Date.now(); !transpiler.finished();) {
        if (Date.now() - started > 50_000) throw new Error('the worker did not finish');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(files.slice(0, 100).filter((file) => transpiler.take(file, true) !== undefined)).toEqual([]);
      expect(transpiler.take(files.at(-1)!, true)?.code).toContain('299');
    } finally {
      transpiler.stop();
    }
  }, 60_000);
});
