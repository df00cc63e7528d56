import type { Command } from 'commander';
import { formatIssue, type LoadIssue } from '../../definitions/issues.js';
import { loadForCommand, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';

/**
 * Loads and validates everything, checks every generated schema with Ajv's
 * JSON Schema 2020-12 validator and every model's API key variable, and
 * prints all problems. Exits non-zero when any is an error.
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check the agents folder: definitions, references, generated schemas, model settings and upstream MCP servers')
    .option(DIR_OPTION, DIR_HELP)
    .option('--no-upstream', 'do not connect to the upstream MCP servers of agents/mcp.json')
    .option('--types', 'also type-check the folder: tsc --noEmit -p <dir> (needs the tsconfig.json agentport init writes)')
    .action(async (options: DirOptions & { upstream?: boolean; types?: boolean }) => {
      const loaded = await loadForCommand(options);
      const { registry } = loaded;
      const problems: LoadIssue[] = [...loaded.issues];
      if (loaded.errors.length === 0) {
        problems.push(...(await checkSchemas(registry)));
      }
      // Type errors are found whatever loading found: every problem in one pass.
      if (options.types) {
        const { typeCheck } = await import('../typeCheck.js');
        const types = await typeCheck(registry.agentsDir);
        process.stdout.write(`${types.summary}\n`);
        problems.push(...types.issues);
      }
      // Each upstream server is connected to: its tool count, or why it cannot be reached.
      if (registry.upstream && options.upstream !== false) {
        const { checkUpstreamServers } = await import('../../upstream/report.js');
        const upstream = await checkUpstreamServers(registry);
        for (const line of upstream.lines) process.stdout.write(`${line}\n`);
        problems.push(...upstream.issues);
      }
      const { DEFAULT_API_KEY_ENV } = await import('../../models/resolveModel.js');
      for (const model of registry.models.values()) {
        const def = model.definition;
        if (def.provider !== 'openai') continue;
        const variable = def.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
        if (!process.env[variable]) {
          problems.push({
            severity: 'warning',
            file: model.file,
            definition: model.name,
            field: 'apiKeyEnv',
            message: `${variable} is not set: calls to this model will fail until it is`,
          });
        }
      }
      const errors = problems.filter((p) => p.severity === 'error');
      for (const problem of problems) process.stdout.write(`${formatIssue(problem)}\n`);
      const upstreamCount = registry.upstream?.servers.size ? `, ${registry.upstream.servers.size} upstream server(s)` : '';
      const counts = `${registry.prompts.size} prompt(s), ${registry.tools.size} tool(s), ${registry.models.size} model(s), ${registry.hooks.size} hook(s), ${registry.agents.size} agent(s)${upstreamCount}`;
      process.stdout.write(
        errors.length
          ? `\n${errors.length} error(s), ${problems.length - errors.length} warning(s) in ${registry.agentsDir}\n`
          : `\nok: ${counts} in ${registry.agentsDir}${problems.length ? ` (${problems.length} warning(s))` : ''}\n`,
      );
      if (errors.length) process.exitCode = 1;
    });
}

async function checkSchemas(registry: import('../../registry/types.js').Registry): Promise<LoadIssue[]> {
  const [{ Ajv2020 }, { buildToolCatalog }, { toJsonSchema }] = await Promise.all([
    import('ajv/dist/2020.js'),
    import('../../server/toolCatalog.js'),
    import('../../definitions/jsonSchema.js'),
  ]);
  const ajv = new Ajv2020({ strict: false });
  const issues: LoadIssue[] = [];
  const check = (schema: object, file: string, definition: string, field: string) => {
    try {
      ajv.compile(schema);
    } catch (error) {
      issues.push({
        severity: 'error',
        file,
        definition,
        field,
        message: `generated JSON Schema is invalid: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  };
  for (const tool of buildToolCatalog(registry)) {
    const source = registry.prompts.get(tool.name) ?? registry.agents.get(tool.name);
    check(tool.inputSchema, source?.file ?? '', tool.name, 'requiredSchema');
  }
  for (const tool of registry.tools.values()) {
    if (!tool.definition.args) continue;
    try {
      check(
        { $schema: 'https://json-schema.org/draft/2020-12/schema', ...toJsonSchema(tool.definition.args) },
        tool.file,
        tool.name,
        'args',
      );
    } catch (error) {
      issues.push({
        severity: 'error',
        file: tool.file,
        definition: tool.name,
        field: 'args',
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return issues;
}
