// A big agents folder for the start-up benchmark: `count` exposed prompts, one
// TypeScript definition file each with a zod input schema, plus one model; and
// the same tools as one module a bare SDK server registers (the reference).
// Tools are Seal-Tools tools namespaced to `count` when the data set is there,
// else generated ones of the same shape.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATA_DIR, namespaced, readJsonl, toMcpTool } from './sealTools.mjs';

/** Tools in MCP shape: name, description, inputSchema (plain JSON Schema properties). */
export function benchTools(count) {
  if (existsSync(path.join(DATA_DIR, 'tool.jsonl'))) {
    // A few Seal-Tools names contain spaces, which MCP tool names may not.
    return namespaced(readJsonl('tool.jsonl').map(toMcpTool), count).map((tool) => ({ ...tool, name: tool.name.replaceAll(' ', '_') }));
  }
  const words = ['weather', 'invoice', 'flight', 'stock', 'translate', 'calendar', 'email', 'report', 'image', 'search'];
  return Array.from({ length: count }, (_, i) => {
    const a = words[i % words.length];
    const b = words[Math.floor(i / words.length) % words.length];
    return {
      name: `tool_${i}_${a}_${b}`,
      description: `Handle ${a} requests about ${b} (variant ${i}).`,
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', description: `What to look up about ${a}` },
          limit: { type: 'integer', description: 'How many results' },
        },
        required: ['query'],
      },
    };
  });
}

/** zod source for one JSON Schema property (the Seal-Tools types). */
function zodOf(schema, required) {
  const base =
    {
      string: 'z.string()',
      integer: 'z.number().int()',
      number: 'z.number()',
      boolean: 'z.boolean()',
      array: 'z.array(z.unknown())',
      object: 'z.record(z.string(), z.unknown())',
    }[schema.type] ?? 'z.string()';
  const described = schema.description ? `${base}.describe(${JSON.stringify(schema.description)})` : base;
  return required ? described : `${described}.optional()`;
}

function zodObject(inputSchema) {
  const required = new Set(inputSchema.required ?? []);
  const fields = Object.entries(inputSchema.properties ?? {}).map(
    ([key, schema]) => `${JSON.stringify(key)}: ${zodOf(schema, required.has(key))}`,
  );
  return `z.object({ ${fields.join(', ')} })`;
}

/**
 * Writes `<dir>/agents` (models/main.ts, prompts/<name>.ts) and `<dir>/bare-tools.mjs`.
 * Returns the agents folder.
 */
export function writeBigFolder(dir, count) {
  const tools = benchTools(count);
  const agents = path.join(dir, 'agents');
  mkdirSync(path.join(agents, 'models'), { recursive: true });
  mkdirSync(path.join(agents, 'prompts'), { recursive: true });
  writeFileSync(
    path.join(agents, 'models', 'main.ts'),
    "import { defineModel } from 'agentport';\nexport default defineModel({ name: 'main', provider: 'openai', model: 'bench-model' });\n",
  );
  for (const tool of tools) {
    writeFileSync(
      path.join(agents, 'prompts', `${tool.name}.ts`),
      [
        "import { definePrompt } from 'agentport';",
        "import { z } from 'zod';",
        '',
        'export default definePrompt({',
        `  name: ${JSON.stringify(tool.name)},`,
        `  toolDescription: ${JSON.stringify(tool.description)},`,
        "  model: 'main',",
        `  prompt: ${JSON.stringify(`You are the ${tool.name} assistant. ${tool.description}`)},`,
        '  exposeAsTool: true,',
        `  requiredSchema: ${zodObject(tool.inputSchema)},`,
        '});',
        '',
      ].join('\n'),
    );
  }
  // The reference: one hand-written module registering the same tools with the same zod schemas.
  const registrations = tools.map(
    (tool) =>
      `  server.registerTool(${JSON.stringify(tool.name)}, { description: ${JSON.stringify(tool.description)}, inputSchema: ${zodObject(tool.inputSchema)} }, handler);`,
  );
  writeFileSync(
    path.join(dir, 'bare-tools.mjs'),
    // zod is passed in: the temporary folder has no node_modules to resolve it from.
    `const handler = async () => ({ content: [{ type: 'text', text: 'ok' }] });\nexport function register(server, z) {\n${registrations.join('\n')}\n}\n`,
  );
  return agents;
}
