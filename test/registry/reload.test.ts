/**
 * Loading a folder again in the same process (serve --watch): every
 * definition file's current contents are imported, including ES modules in
 * plain JavaScript, which Node's own import would serve from its cache.
 */
import { describe, expect, it } from 'vitest';
import { loadRegistryOrThrow } from '../../src/registry/load.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const tool = (description: string) =>
  `export default { description: ${JSON.stringify(description)}, execute: async () => ({ status: 'success', result: '' }) };\n`;

describe('loading a folder again (fresh)', () => {
  it('imports the current contents of TypeScript, .mjs and "type": "module" .js files and of the modules they import', async () => {
    const dir = tempDir('agentport-reload-');
    const version = (n: number) => {
      writeFiles(dir, {
        'package.json': JSON.stringify({ type: 'module' }),
        'models/m.ts': `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n`,
        'lib/words.ts': `export const WORDS = 'version ${n}';\n`,
        'lib/more.js': `export const MORE = '(${n})';\n`,
        'prompts/p.ts': `import { definePrompt } from 'agentport';\nimport { WORDS } from '../lib/words';\nimport { MORE } from '../lib/more.js';\nexport default definePrompt({ name: 'p', toolDescription: WORDS + MORE, prompt: 'x', model: 'm', exposeAsTool: true });\n`,
        'tools/in_mjs.mjs': tool(`mjs ${n}`),
        'tools/in_js.js': tool(`js ${n}`),
        'lib/helper.mjs': `export const HELPER = 'helper ${n}';\n`,
        'tools/uses_helper.mjs': `import { HELPER } from '../lib/helper.mjs';\n${tool('').replace('""', 'HELPER')}`,
        // Top-level await: imported natively under a new URL each time.
        'tools/waits.mjs': `await Promise.resolve();\n${tool(`waits ${n}`)}`,
      });
    };
    const descriptions = async (fresh: boolean) => {
      const registry = await loadRegistryOrThrow({ agentsDir: dir, fresh });
      return {
        prompt: registry.prompts.get('p')?.definition.toolDescription,
        tools: Object.fromEntries([...registry.tools.values()].map((entry) => [entry.name, entry.definition.description])),
      };
    };
    version(1);
    expect(await descriptions(false)).toEqual({
      prompt: 'version 1(1)',
      tools: { in_js: 'js 1', in_mjs: 'mjs 1', uses_helper: 'helper 1', waits: 'waits 1' },
    });
    version(2);
    expect(await descriptions(true)).toEqual({
      prompt: 'version 2(2)',
      tools: { in_js: 'js 2', in_mjs: 'mjs 2', uses_helper: 'helper 2', waits: 'waits 2' },
    });
    version(3);
    expect(await descriptions(true)).toEqual({
      prompt: 'version 3(3)',
      tools: { in_js: 'js 3', in_mjs: 'mjs 3', uses_helper: 'helper 3', waits: 'waits 3' },
    });
  });
});
