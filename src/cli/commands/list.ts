import type { Command } from 'commander';
import { fail, loadForCommand, printIssues, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';

interface ListOptions extends DirOptions {
  json?: boolean;
  upstream?: boolean;
}

export function registerListCommand(program: Command): void {
  program
    .command('list')
    .description('list the MCP tools the agents folder exposes, with their input schemas')
    .option(DIR_OPTION, DIR_HELP)
    .option('--json', 'print the tools as JSON (MCP tools/list shape)')
    .option('--upstream', 'list the tools of the upstream MCP servers of agents/mcp.json instead (connecting to each)')
    .action(async (options: ListOptions) => {
      const loaded = await loadForCommand(options);
      printIssues(loaded.issues);
      if (loaded.errors.length) {
        fail(`${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);
        return;
      }
      if (options.upstream) {
        await listUpstream(loaded.registry, options.json === true);
        return;
      }
      const { buildToolCatalog, listedTool } = await import('../../server/toolCatalog.js');
      const tools = buildToolCatalog(loaded.registry).map(listedTool);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ tools }, null, 2)}\n`);
        return;
      }
      if (tools.length === 0) {
        process.stdout.write('No exposed tools: set exposeAsTool: true on a prompt or agent.\n');
        return;
      }
      for (const tool of tools) {
        const properties = (tool.inputSchema.properties ?? {}) as Record<string, { type?: unknown; description?: string }>;
        const required = new Set((tool.inputSchema.required as string[] | undefined) ?? []);
        process.stdout.write(`${tool.name}  ${tool.description}\n`);
        for (const [name, schema] of Object.entries(properties)) {
          const type = Array.isArray(schema.type) ? schema.type.join('|') : typeof schema.type === 'string' ? schema.type : 'any';
          const flag = required.has(name) ? '' : '?';
          process.stdout.write(`  ${name}${flag}: ${type}${schema.description ? `  ${schema.description}` : ''}\n`);
        }
      }
    });
}

/** `list --upstream`: each upstream tool under the name models see, with the server's own name. */
async function listUpstream(registry: import('../../registry/types.js').Registry, json: boolean): Promise<void> {
  if (!registry.upstream?.servers.size) {
    fail(`${registry.agentsDir} declares no upstream MCP servers (agents/mcp.json)`);
    return;
  }
  const { readUpstreamTools } = await import('../../upstream/report.js');
  const { tools, failures } = await readUpstreamTools(registry);
  for (const failure of failures) process.stderr.write(`agentport: ${failure.error}\n`);
  if (failures.length) process.exitCode = 1;
  if (json) {
    const listed = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      _meta: { 'agentport/upstream': { server: tool.server, tool: tool.tool } },
    }));
    process.stdout.write(`${JSON.stringify({ tools: listed }, null, 2)}\n`);
    return;
  }
  for (const tool of tools) {
    const renamed = tool.name === `${tool.server}__${tool.tool}` ? '' : `  (${tool.tool} on ${tool.server})`;
    process.stdout.write(`${tool.name}  ${tool.description}${renamed}\n`);
  }
}
