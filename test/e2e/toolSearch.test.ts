/**
 * Deferred tool search at the MCP surface: 100 exposed tools, threshold 40,
 * through the real MCP client.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { tempDir } from '../support/mcpClients.js';

const TOPICS = ['invoice', 'shipment', 'weather', 'calendar', 'payroll', 'inventory', 'ticket', 'refund', 'translation', 'forecast'];

/** An agents folder with 100 exposed prompts (two always-load), written for this test. */
function hundredPrompts(): string {
  const dir = tempDir('agentport-many-');
  mkdirSync(path.join(dir, 'models'), { recursive: true });
  mkdirSync(path.join(dir, 'prompts'), { recursive: true });
  writeFileSync(
    path.join(dir, 'models', 'm.ts'),
    `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'many-model' });\n`,
  );
  const lines = [`import { definePrompt } from 'agentport';`, `import { z } from 'zod';`];
  for (let i = 0; i < 100; i++) {
    const topic = TOPICS[i % TOPICS.length]!;
    const name = i === 7 ? 'billing.export-csv' : `${topic}_tool_${i}`;
    const description = i === 7 ? 'Export the billing ledger as a CSV file.' : `Handle ${topic} requests, variant ${i}.`;
    lines.push(
      `export const p${i} = definePrompt({ name: ${JSON.stringify(name)}, toolDescription: ${JSON.stringify(description)}, model: 'm', prompt: 'You handle ${topic}.', exposeAsTool: true${
        i < 2 ? ', alwaysLoad: true' : ''
      }, requiredSchema: z.object({ ${topic}_id: z.string().describe('The ${topic} id') }) });`,
    );
  }
  writeFileSync(path.join(dir, 'prompts', 'many.ts'), lines.join('\n'));
  return dir;
}

const model = new FakeModelServer();
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  await model.start();
  agentport = await startInProcess({
    agentsDir: hundredPrompts(),
    env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
    server: { toolSearch: { mode: 'auto', threshold: 40 } },
  });
  client = await agentport.connect('modern');
});
afterAll(async () => {
  await agentport?.close();
  await model.stop();
});

describe('tool search at the MCP surface', () => {
  it('[TS-6] lists the always-load tools plus tool_search and call_tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'invoice_tool_0',
      'shipment_tool_1',
      'tool_search',
      'call_tool',
      'run_wait',
      'run_status',
      'run_cancel',
    ]);
    const search = tools.find((t) => t.name === 'tool_search')!;
    expect(search.description).toContain('billing.export-csv');
    expect(client.getInstructions()).toContain('Deferred tools: ');
  });

  it('[TS-5] never defers always-load tools or tool_search', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((t) => t.name === 'tool_search')!;
    const announced = search.description!.slice(search.description!.indexOf('Deferred tools: ') + 16).split(', ');
    expect(announced).toHaveLength(98);
    expect(announced).not.toContain('invoice_tool_0');
    expect(announced).not.toContain('shipment_tool_1');
    expect(announced).not.toContain('tool_search');
    expect(tools.find((t) => t.name === 'invoice_tool_0')!.inputSchema.properties).toHaveProperty('invoice_id');
  });

  it('[TS-1] select: returns the named tools with full schemas and reports unknown names', async () => {
    const result = await client.callTool({ name: 'tool_search', arguments: { query: 'select:billing.export-csv,no_such_tool' } });
    const text = textOf(result);
    const line = text.split('\n')[1]!;
    expect(JSON.parse(line.replace(/^<function>|<\/function>$/g, ''))).toEqual({
      description: 'Export the billing ledger as a CSV file.',
      name: 'billing.export-csv',
      parameters: {
        type: 'object',
        properties: { refund_id: { type: 'string', description: 'The refund id' }, thread_id: expect.objectContaining({ type: 'string' }) },
        required: ['refund_id'],
        additionalProperties: false,
      },
    });
    expect(text).toContain('No tool is named: no_such_tool.');
  });

  it('[TS-2] keyword search returns up to max_results tools, best first', async () => {
    const result = await client.callTool({ name: 'tool_search', arguments: { query: 'refund requests', max_results: 3 } });
    const names = (result.structuredContent as { tools: string[] }).tools;
    expect(names).toHaveLength(3);
    for (const name of names) expect(name).toMatch(/^refund_tool_/);
  });

  it('[TS-6] tools/list does not change because of a search', async () => {
    const before = await client.listTools();
    await client.callTool({ name: 'tool_search', arguments: { query: 'select:weather_tool_2' } });
    const after = await client.listTools();
    expect(after).toEqual(before);
  });

  it('[TS-6] runs a deferred tool through call_tool and directly by name, validating arguments alike', async () => {
    model.reply({ text: 'via call_tool' }, { text: 'direct' });
    const viaCallTool = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'weather_tool_2', arguments: { weather_id: 'w-1' } },
    });
    expect(textOf(viaCallTool)).toBe('via call_tool');
    const direct = await client.callTool({ name: 'weather_tool_2', arguments: { weather_id: 'w-2' } });
    expect(textOf(direct)).toBe('direct');
    expect(model.requests.slice(-2).map((r) => r.body.messages[1]!.content)).toEqual(['{"weather_id":"w-1"}', '{"weather_id":"w-2"}']);
    const invalid = await client.callTool({ name: 'call_tool', arguments: { name: 'weather_tool_2', arguments: { wrong: 1 } } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/weather_id/);
    const unknown = await client.callTool({ name: 'call_tool', arguments: { name: 'nope' } });
    expect(textOf(unknown)).toBe('call_tool: no tool is named "nope". Find tools with tool_search first.');
  });
});
