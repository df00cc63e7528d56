/**
 * The `agentport` command line as a commander program, built without being
 * run: main.ts runs it as the bin entry, and tests run it in their own process.
 * Each command loads only what it needs, and a command line loads only its
 * command, so `serve` on stdio starts quickly.
 */
import { createRequire } from 'node:module';
import { VERSION } from '../server/version.js';

// Required rather than imported: the CommonJS package then loads without
// Node's export scan, which is most of its start-up cost.
const { Command } = createRequire(import.meta.url)('commander') as typeof import('commander');

type Register = (program: import('commander').Command) => void;

/** Each command's module, in the order help lists them: loaded only when the command line needs it. */
const COMMANDS: Record<string, () => Promise<Register>> = {
  init: async () => (await import('./commands/init.js')).registerInitCommand,
  serve: async () => (await import('./commands/serve.js')).registerServeCommand,
  list: async () => (await import('./commands/list.js')).registerListCommand,
  doctor: async () => (await import('./commands/doctor.js')).registerDoctorCommand,
  config: async () => (await import('./commands/config.js')).registerConfigCommand,
  pack: async () => (await import('./commands/pack.js')).registerPackCommand,
  search: async () => {
    const [{ registerSearchCommand }, { searchableRegistryTools }] = await Promise.all([
      import('./commands/search.js'),
      import('./registryTools.js'),
    ]);
    return (program) => registerSearchCommand(program, { loadRegistryTools: searchableRegistryTools });
  },
  run: async () => (await import('./commands/run.js')).registerRunCommand,
};

/**
 * The program for a command line (`argv` as in process.argv). A command line that starts with a command's name
 * gets that command alone, its help and errors included: a server's start then loads no other command's code.
 * Any other (no command, an option first such as `-h serve`, `help`, a mistyped name that gets a suggestion) gets
 * them all.
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<import('commander').Command> {
  const program = new Command()
    .name('agentport')
    .description('Serve the prompts and agents in an agents/ folder as MCP tools.')
    .version(VERSION, '-v, --version')
    .showHelpAfterError();
  const first = argv[2];
  const wanted = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  for (const register of await Promise.all(wanted.map((name) => COMMANDS[name]!()))) register(program);
  return program;
}

/** A command that failed (a refusal, or an error it did not handle): one line on stderr, exit code 1. */
export function reportFailure(error: unknown): void {
  process.stderr.write(`agentport: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
