/**
 * The `agentport` command line as a commander program, built without being
 * run: main.ts runs it as the bin entry, and tests run it in their own process.
 * Each subcommand loads only what it needs, so `serve` on stdio starts quickly.
 */
import { createRequire } from 'node:module';
import { VERSION } from '../server/version.js';
import { registerConfigCommand } from './commands/config.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerInitCommand } from './commands/init.js';
import { registerListCommand } from './commands/list.js';
import { registerPackCommand } from './commands/pack.js';
import { registerRunCommand } from './commands/run.js';
import { registerSearchCommand } from './commands/search.js';
import { registerServeCommand } from './commands/serve.js';
import { searchableRegistryTools } from './registryTools.js';

// Required rather than imported: the CommonJS package then loads without
// Node's export scan, which is most of its start-up cost.
const { Command } = createRequire(import.meta.url)('commander') as typeof import('commander');

export function buildProgram(): import('commander').Command {
  const program = new Command()
    .name('agentport')
    .description('Serve the prompts and agents in an agents/ folder as MCP tools.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError();
  registerInitCommand(program);
  registerServeCommand(program);
  registerListCommand(program);
  registerDoctorCommand(program);
  registerConfigCommand(program);
  registerPackCommand(program);
  registerSearchCommand(program, { loadRegistryTools: searchableRegistryTools });
  registerRunCommand(program);
  return program;
}

/** A command that failed (a refusal, or an error it did not handle): one line on stderr, exit code 1. */
export function reportFailure(error: unknown): void {
  process.stderr.write(`agentport: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
