/**
 * Output schemas (MC-11): every exposed tool declares one, and every
 * structuredContent it returns validates against it (checked with Ajv, JSON
 * Schema 2020-12, as strict clients do). A prompt with a responseSchema asks
 * the model for that JSON, and returns it parsed, or RESPONSE_INVALID.
 */
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from '../support/paths.js';
import { useRuntimeHarness } from './harness.js';

describe('[MC-11] output schemas', () => {
  const h = useRuntimeHarness({}, {}, path.join(FIXTURES, 'agents', 'usage'));
  const ajv = new Ajv2020({ strict: false });

  async function schemas() {
    const { tools } = await h.client.listTools();
    return new Map(tools.map((tool) => [tool.name, tool.outputSchema]));
  }

  it('declares an output schema on every exposed tool, and results (answers and errors) validate against it', async () => {
    const byName = await schemas();
    for (const name of ['adder', 'measure']) expect(byName.get(name), name).toMatchObject({ type: 'object' });
    const validate = ajv.compile(byName.get('adder')!);
    h.model.reply({ text: 'plain answer' });
    const answered = await h.call('adder', { message: 'hi' });
    expect(validate(answered.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    const refused = await h.call('adder', { nope: 1 });
    expect(refused.isError).toBe(true);
    expect(validate(refused.structuredContent), JSON.stringify(validate.errors)).toBe(true);
  });

  it('asks for JSON of the responseSchema and returns the parsed answer', async () => {
    const validate = ajv.compile((await schemas()).get('measure')!);
    h.model.reply({ text: '```json\n{"value": 2.5, "unit": "m"}\n```' });
    const result = await h.call('measure', { message: 'how long?' });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { response: unknown }).response).toEqual({ value: 2.5, unit: 'm' });
    expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
    expect(h.sent().at(-1)!.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: { value: { type: 'number' }, unit: { enum: ['m', 'cm'] } } } },
    });
  });

  it('reports an answer of the wrong shape as RESPONSE_INVALID, naming the field, with the text kept', async () => {
    h.model.reply({ text: '{"value": "long", "unit": "km"}' });
    const result = await h.call('measure', { message: 'how long?' });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as { error: { code: string; message: string; data: { text: string } } }).error;
    expect(error.code).toBe('RESPONSE_INVALID');
    expect(error.message).toContain('value:');
    expect(error.message).toContain('unit:');
    expect(error.data.text).toBe('{"value": "long", "unit": "km"}');
    h.model.reply({ text: 'not json at all' });
    const notJson = await h.call('measure', { message: 'how long?' });
    expect((notJson.structuredContent as { error: { message: string } }).error.message).toContain('the answer is not JSON');
  });

  it('lists the icons and annotations the definitions give', async () => {
    const { tools } = await h.client.listTools();
    const measure = tools.find((tool) => tool.name === 'measure')!;
    expect(measure.icons).toEqual([{ src: expect.stringMatching(/^data:image\/svg\+xml;base64,/), mimeType: 'image/svg+xml' }]);
    expect(measure.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false, destructiveHint: false });
    const adder = tools.find((tool) => tool.name === 'adder')!;
    expect(adder.icons).toEqual([{ src: 'https://example.com/adder.png' }]);
    expect(adder.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
  });
});

describe('[MC-11] output schemas of the shipped examples', () => {
  it('declares a valid 2020-12 output schema on every exposed tool of agents/, over stdio', async () => {
    const { connectStdio } = await import('../support/mcpClients.js');
    const { EXAMPLE_AGENTS } = await import('../support/paths.js');
    const { client } = await connectStdio('legacy', { agentsDir: EXAMPLE_AGENTS, env: { OPENAI_API_KEY: 'k' } });
    try {
      const { tools } = await client.listTools();
      const exposed = tools.filter((tool) => !['run_wait', 'run_status', 'run_cancel', 'tool_search', 'call_tool'].includes(tool.name));
      expect(exposed.length).toBeGreaterThan(5);
      const ajv = new Ajv2020({ strict: false });
      for (const tool of exposed) {
        expect(tool.outputSchema, tool.name).toMatchObject({
          type: 'object',
          properties: { thread_id: { type: 'string' }, tool_calls: { type: 'array' } },
        });
        // A schema Ajv compiles, and a plain answer's structuredContent fits it.
        const validate = ajv.compile(tool.outputSchema!);
        const answer = {
          thread_id: 't',
          response: (tool.outputSchema!.properties as { response: { type?: string } }).response.type === 'string' ? 'ok' : undefined,
          steps: 1,
          turns: 1,
          tool_calls: [],
        };
        if (answer.response === undefined) delete answer.response;
        expect(validate(answer), `${tool.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    } finally {
      await client.close();
    }
  }, 30_000);
});
