// A big agents folder for the start-up benchmark: `count` exposed prompts, one
// TypeScript definition file each with a zod input schema, plus one model; and
// the same tools as one module a bare SDK server registers (the reference).
// Tools are Seal-Tools tools namespaced to `count` when the data set is there,
// else generated ones of the same shape.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// What agentport's tools/list says of every tool (the built package: `npm run bench` builds it first).
import { PLAIN_RESULT_SCHEMA, THREAD_ID_PROPERTY, humanize } from '../dist/server/toolCatalog.js';
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

/**
 * zod source for one JSON Schema property (the Seal-Tools types). `asListed`: an integer as a plain number, since zod
 * writes safe-integer bounds into its JSON Schema that agentport's list leaves out (a list a little smaller than
 * agentport's, rather than larger).
 */
function zodOf(schema, required, asListed = false) {
  const base =
    {
      string: 'z.string()',
      integer: asListed ? 'z.number()' : 'z.number().int()',
      number: 'z.number()',
      boolean: 'z.boolean()',
      array: 'z.array(z.unknown())',
      object: 'z.record(z.string(), z.unknown())',
    }[schema.type] ?? 'z.string()';
  const described = schema.description ? `${base}.describe(${JSON.stringify(schema.description)})` : base;
  return required ? described : `${described}.optional()`;
}

/** zod source for a tool's input; `asListed`: closed, with the thread_id argument agentport adds. */
function zodObject(inputSchema, asListed = false) {
  const required = new Set(inputSchema.required ?? []);
  const fields = Object.entries(inputSchema.properties ?? {}).map(
    ([key, schema]) => `${JSON.stringify(key)}: ${zodOf(schema, required.has(key), asListed)}`,
  );
  return asListed ? `z.strictObject({ ${[...fields, 'thread_id: threadId'].join(', ')} })` : `z.object({ ${fields.join(', ')} })`;
}

/**
 * Writes `<dir>/agents` (models/main.ts, prompts/<name>.ts), `<dir>/bare-tools.mjs` and `<dir>/bare-tools-listed.mjs`.
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
  // The references: modules registering the same tools with the same zod schemas, one with input schemas only, one
  // listing them as agentport lists them (title, thread_id, closed input objects, the output schema, annotations), so
  // that a client reads a list of the same size from both. Separate modules: neither server compiles the other's code.
  const registration = (tool, config) => `  server.registerTool(${JSON.stringify(tool.name)}, ${config}, handler);`;
  const handler = "const handler = async () => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: { response: 'ok' } });";
  // zod is passed in: the generated module's folder need not have a node_modules to resolve it from.
  const module = (lines, registrations) => [...lines, 'export function register(server, z) {', ...registrations, '}', ''].join('\n');
  writeFileSync(
    path.join(dir, 'bare-tools.mjs'),
    module(
      [handler],
      tools.map((tool) =>
        registration(tool, `{ description: ${JSON.stringify(tool.description)}, inputSchema: ${zodObject(tool.inputSchema)} }`),
      ),
    ),
  );
  writeFileSync(
    path.join(dir, 'bare-tools-listed.mjs'),
    module(
      [
        handler,
        'const hints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };',
        // agentport's output schema of a text answer, as JSON Schema (one object for every tool, as there), in the
        // Standard Schema wrapper the SDK takes for a schema it need not convert.
        `const outputJson = ${JSON.stringify(PLAIN_RESULT_SCHEMA)};`,
        "const output = { '~standard': { version: 1, vendor: 'bench', validate: (value) => ({ value }), jsonSchema: { input: () => outputJson, output: () => outputJson } } };",
      ],
      [
        `  const threadId = z.string().optional().describe(${JSON.stringify(THREAD_ID_PROPERTY.description)});`,
        ...tools.map((tool) => {
          const title = JSON.stringify(humanize(tool.name));
          return registration(
            tool,
            `{ title: ${title}, description: ${JSON.stringify(tool.description)}, inputSchema: ${zodObject(tool.inputSchema, true)}, outputSchema: output, annotations: { title: ${title}, ...hints } }`,
          );
        }),
      ],
    ),
  );
  return agents;
}
