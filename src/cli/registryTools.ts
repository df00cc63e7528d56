import { loadForCommand, printIssues } from './context.js';

/** Exposed tools and function tools of an agents folder, in MCP tools/list shape (with `upstream`: and its upstream servers' tools). */
export async function searchableRegistryTools(
  dir: string,
  options: { upstream?: boolean } = {},
): Promise<Array<{ name: string; description?: string; inputSchema?: Record<string, unknown> }>> {
  const loaded = await loadForCommand({ dir });
  printIssues(loaded.issues);
  if (loaded.errors.length) throw new Error(`${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);
  const [{ buildToolCatalog, listedTool }, { toolArgsSchema }] = await Promise.all([
    import('../server/toolCatalog.js'),
    import('../definitions/jsonSchema.js'),
  ]);
  const tools = new Map<string, { name: string; description?: string; inputSchema?: Record<string, unknown> }>();
  for (const tool of buildToolCatalog(loaded.registry)) tools.set(tool.name, listedTool(tool));
  for (const tool of loaded.registry.tools.values()) {
    if (tools.has(tool.name)) continue;
    tools.set(tool.name, { name: tool.name, description: tool.definition.description, inputSchema: toolArgsSchema(tool.definition.args) });
  }
  if (options.upstream) {
    const { readUpstreamTools } = await import('../upstream/report.js');
    const upstream = await readUpstreamTools(loaded.registry);
    for (const failure of upstream.failures) process.stderr.write(`agentport: ${failure.error}\n`);
    for (const tool of upstream.tools)
      tools.set(tool.name, { name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
  }
  return [...tools.values()];
}
