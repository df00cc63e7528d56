/**
 * Deferred tool search inside a run: the model sees deferred tools by name,
 * searches, and calls what it found from the next step on.
 */
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness();

describe('deferred tools in the runtime', () => {
  it('[TS-7] shows deferred tools by name only; a tool found by search is callable from the next step and stays loaded', async () => {
    h.model.reply(
      { toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: 'weather forecast city' } }] },
      { toolCalls: [{ id: 'w', name: 'weather_lookup', arguments: { city: 'Lisbon' } }] },
      { text: 'It is sunny in Lisbon.' },
    );
    const result = await h.call('searcher', { message: 'Weather in Lisbon?' });
    expect(textOf(result)).toBe('It is sunny in Lisbon.');
    const [first, second, third] = h.sent();
    const names = (request: typeof first) => request!.tools!.map((t) => t.function.name);
    expect(names(first)).toEqual(['add_numbers', 'tool_search']);
    const search = first!.tools!.find((t) => t.function.name === 'tool_search')!;
    expect(search.function.description).toContain('Deferred tools: weather_lookup, stock_price.');
    // The search result is a <functions> block with the full schema, then a plain line.
    const searchResult = String(second!.messages.find((m) => m.role === 'tool')!.content);
    const lines = searchResult.split('\n');
    expect(lines[0]).toBe('<functions>');
    expect(JSON.parse(lines[1]!.replace(/^<function>|<\/function>$/g, ''))).toEqual({
      description: 'Look up the current weather forecast for a city.',
      name: 'weather_lookup',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name' } },
        required: ['city'],
        additionalProperties: false,
      },
    });
    expect(lines.at(-1)).toMatch(/can be called now/);
    expect(names(second)).toEqual(['add_numbers', 'weather_lookup', 'tool_search']);
    expect(names(third)).toEqual(['add_numbers', 'weather_lookup', 'tool_search']);
    expect(third!.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'w')!.content).toBe('Sunny in Lisbon');

    // A later turn of the same thread keeps it loaded; stock_price is still deferred.
    h.model.reply({ text: 'ok' });
    await h.call('searcher', { message: 'thanks', thread_id: threadIdOf(result) });
    const later = h.sent()[3]!;
    expect(names(later)).toEqual(['add_numbers', 'weather_lookup', 'tool_search']);
    expect(later.tools!.at(-1)!.function.description).toContain('Deferred tools: stock_price.');
  });

  it('[TS-4] answers a bad tool_search query with a clear error the model reads', async () => {
    h.model.reply({ toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: '   ' } }] }, { text: 'giving up' });
    await h.call('searcher', { message: 'x' });
    const tool = h.sent()[1]!.messages.find((m) => m.role === 'tool')!;
    expect(String(tool.content)).toMatch(/^Error: /);
  });
});

describe('a prompt with more tools than the threshold', () => {
  it('[TS-5] [TS-7] defers all but its always-load tools; tool_search is never deferred', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const path = await import('node:path');
    const { tempDir } = await import('../support/mcpClients.js');
    const { startInProcess } = await import('../support/inProcess.js');
    const dir = tempDir('agentport-wide-');
    mkdirSync(path.join(dir, 'models'), { recursive: true });
    mkdirSync(path.join(dir, 'tools'), { recursive: true });
    mkdirSync(path.join(dir, 'prompts'), { recursive: true });
    writeFileSync(
      path.join(dir, 'models', 'm.ts'),
      `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'wide-model' });\n`,
    );
    const names = Array.from({ length: 45 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
    writeFileSync(
      path.join(dir, 'tools', 'many.ts'),
      [
        `import { defineTool } from 'agentport';`,
        ...names.map(
          (name, i) =>
            `export const ${name} = defineTool({ description: 'Tool number ${i}.', ${i === 3 ? 'alwaysLoad: true, ' : ''}execute: async () => ({ status: 'success', result: '${name}' }) });`,
        ),
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, 'prompts', 'wide.ts'),
      `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'wide', toolDescription: 'Many tools.', model: 'm', prompt: 'Wide.', tools: ${JSON.stringify(names)}, exposeAsTool: true });\n`,
    );
    const wide = await startInProcess({ agentsDir: dir, env: { OPENAI_BASE_URL: h.model.baseURL, OPENAI_API_KEY: 'k' } });
    try {
      const client = await wide.connect();
      h.model.reply({ text: 'ok' });
      await client.callTool({ name: 'wide', arguments: { message: 'hi' } });
      const request = h.sent().at(-1)!;
      expect(request.tools!.map((t) => t.function.name)).toEqual(['tool_03', 'tool_search']);
      const description = request.tools![1]!.function.description!;
      expect(description).toContain('tool_00, tool_01, tool_02, tool_04');
      expect(description).not.toContain('tool_03');
    } finally {
      await wide.close();
    }
  });
});
