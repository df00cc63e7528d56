import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { fail, printIssues, shownPath, DIR_HELP, DIR_OPTION } from '../context.js';
import type { PackOptions } from '../pack/prepare.js';

/** `agentport pack`: an MCP Bundle (.mcpb) of agentport and an agents folder, for Claude Desktop. */
export function registerPackCommand(program: Command): void {
  program
    .command('pack')
    .description('build an MCP Bundle (.mcpb) of the agents folder for Claude Desktop, with agentport and its dependencies inside')
    .option(DIR_OPTION, DIR_HELP)
    .option('-o, --out <file>', 'the bundle to write (default: ./<name>.mcpb)')
    .option('--name <name>', "bundle name (default: the agents folder's package.json name, else the folder's name)")
    .action(async (options: PackOptions) => {
      const { prepareBundle } = await import('../pack/prepare.js');
      const prepared = await prepareBundle(options);
      printIssues(prepared.issues);
      if (!prepared.ok) {
        fail(prepared.message);
        return;
      }
      const { agentsDir, manifest, toolCount } = prepared;
      const [{ stageBundle }, mcpb] = await Promise.all([import('../pack/stage.js'), import('@anthropic-ai/mcpb')]);
      const name = manifest.name;
      const out = path.resolve(options.out ?? `${name}.mcpb`);
      const stageDir = mkdtempSync(path.join(os.tmpdir(), 'agentport-pack-'));
      try {
        const { packages } = stageBundle({ stageDir, agentsDir, manifest });
        // mcpb reports validation with console.log even when silent: keep stdout for our summary.
        const log = console.log;
        console.log = () => undefined;
        let packed: boolean;
        try {
          packed = await mcpb.packExtension({ extensionPath: stageDir, outputPath: out, silent: true });
        } finally {
          console.log = log;
        }
        if (!packed) {
          fail(`mcpb could not pack the bundle (staged in ${stageDir})`);
          return;
        }
        const asked = Object.keys(manifest.user_config ?? {});
        process.stdout.write(
          `Packed ${shownPath(out)}: ${name}@${manifest.version}, ${toolCount} tool(s), ${packages} package(s)` +
            `${asked.length ? `; asks for ${asked.join(', ')}` : ''}.\n` +
            'Install it in Claude Desktop: Settings > Extensions, then drag the file in (or double-click it).\n',
        );
      } finally {
        if (process.exitCode === undefined || process.exitCode === 0) rmSync(stageDir, { recursive: true, force: true });
      }
    });
}
