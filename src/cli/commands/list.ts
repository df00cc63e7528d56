import type { Command } from 'commander';
import { fail, loadForCommand, printIssues, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';

interface ListOptions extends DirOptions {
  json?: boolean;
}

export function registerListCommand(program: Command): void {
  program
    .command('list')
    .description('list the MCP tools the agents folder exposes, with their input schemas')
    .option(DIR_OPTION, DIR_HELP)
    .option('--json', 'print the tools as JSON (MCP tools/list shape)')
    .action(async (options: ListOptions) => {
      const loaded = await loadForCommand(options);
      printIssues(loaded.issues);
      if (loaded.errors.length) {
        fail(`${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);
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
          const type = Array.isArray(schema.type) ? schema.type.join('|') : String(schema.type ?? 'any');
          const flag = required.has(name) ? '' : '?';
          process.stdout.write(`  ${name}${flag}: ${type}${schema.description ? `  ${schema.description}` : ''}\n`);
        }
      }
    });
}
