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
      parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' } }, required: ['city'], additionalProperties: false },
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

  it('[TS-5] never defers tool_search itself and answers a bad query with a clear error', async () => {
    h.model.reply({ toolCalls: [{ id: 's', name: 'tool_search', arguments: { query: '   ' } }] }, { text: 'giving up' });
    await h.call('searcher', { message: 'x' });
    const tool = h.sent()[1]!.messages.find((m) => m.role === 'tool')!;
    expect(String(tool.content)).toMatch(/^Error: /);
  });
});
