import { realpathSync } from 'node:fs';
import { moduleFile } from '../../installation.js';
import type { Command } from 'commander';
import { agentsDirOf, fail, loadForCommand, printIssues, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';

const HOSTS = ['claude', 'code', 'cursor'] as const;
type Host = (typeof HOSTS)[number];

const WHERE: Record<Host, string> = {
  claude: 'Claude Desktop: merge into claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop.',
  code: 'Claude Code: save as .mcp.json in your project, or run: claude mcp add-json agentport \'<the "agentport" entry>\'',
  cursor: 'Cursor: save as .cursor/mcp.json in your project (or ~/.cursor/mcp.json for every project).',
};

interface ConfigOptions extends DirOptions {
  http?: boolean;
  url?: string;
  name?: string;
}

/** Prints a ready-to-paste host configuration with absolute paths. */
export function registerConfigCommand(program: Command): void {
  program
    .command('config')
    .description('print a ready-to-paste MCP configuration for Claude Desktop, Claude Code or Cursor')
    .argument('<host>', `one of ${HOSTS.join(', ')}`)
    .option(DIR_OPTION, DIR_HELP)
    .option('--name <name>', 'server name in the configuration', 'agentport')
    .option('--http', 'connect to a running `agentport serve --http` instead of launching it')
    .option('--url <url>', 'URL of the HTTP server', 'http://127.0.0.1:3333/mcp')
    .action(async (host: string, options: ConfigOptions) => {
      if (!(HOSTS as readonly string[]).includes(host)) {
        fail(`unknown host "${host}": expected one of ${HOSTS.join(', ')}`);
        return;
      }
      const name = (options.name ?? 'agentport').trim();
      if (!name) {
        fail('--name must not be empty: it is the server name hosts show');
        return;
      }
      if (options.http && !isHttpUrl(options.url)) {
        fail(`--url must be an http: or https: URL, such as http://127.0.0.1:3333/mcp, got "${options.url ?? ''}"`);
        return;
      }
      let entry: Record<string, unknown>;
      if (options.http) {
        entry = host === 'claude' ? remoteViaStdio(options.url!) : { type: 'http', url: options.url };
        if (process.env.AGENTPORT_TOKEN && host !== 'claude') entry.headers = { Authorization: 'Bearer ${AGENTPORT_TOKEN}' };
      } else {
        const env: Record<string, string> = {};
        // A missing or empty folder is refused here; a folder with errors would not start in the host either.
        const loaded = await loadForCommand(options);
        printIssues(loaded.issues);
        if (loaded.errors.length) {
          fail(
            `not printing a configuration: ${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above; agentport doctor checks them)`,
          );
          return;
        }
        const { DEFAULT_API_KEY_ENV } = await import('../../models/resolveModel.js');
        for (const model of loaded.registry.models.values()) {
          if (model.definition.provider === 'openai') env[model.definition.apiKeyEnv ?? DEFAULT_API_KEY_ENV] = '<your API key>';
        }
        entry = {
          ...(host === 'code' ? { type: 'stdio' } : {}),
          // Claude Desktop does not search PATH the way a shell does: use absolute paths.
          command: process.execPath,
          args: [cliEntry(), 'serve', '--dir', agentsDirOf(options)],
          env,
        };
      }
      process.stderr.write(`${WHERE[host as Host]}\n`);
      process.stdout.write(`${JSON.stringify({ mcpServers: { [name]: entry } }, null, 2)}\n`);
    });
}

function isHttpUrl(value: string | undefined): boolean {
  try {
    const url = new URL(value ?? '');
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

function cliEntry(): string {
  return realpathSync(moduleFile('cli/main'));
}

/** Claude Desktop's config file only launches commands: bridge to HTTP with mcp-remote. */
function remoteViaStdio(url: string): Record<string, unknown> {
  return { command: 'npx', args: ['-y', 'mcp-remote', url] };
}
