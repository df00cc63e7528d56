/**
 * Runs the built CLI the way users do: a child process, with its exit code,
 * stdout and stderr (a fresh data folder and no API key unless given); or,
 * where the process boundary is not what a test is about, the same built
 * program inside the test process, which saves Node's start-up and module
 * loading on every run.
 */
import { execFile } from 'node:child_process';
import { Console } from 'node:console';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from './mcpClients.js';
import { CLI } from './paths.js';

const exec = promisify(execFile);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** What every run starts from: a fresh data folder, AGENTPORT_DIR unset, no API key. */
function baseEnv(): Record<string, string | undefined> {
  return { AGENTPORT_DATA_DIR: tempDir(), AGENTPORT_DIR: undefined, OPENAI_API_KEY: '' };
}

export async function runCli(args: string[], options: CliOptions = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...baseEnv(), ...options.env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * Commands that end their process themselves (process.exit when stopping,
 * signal handlers, stdin): run in this process they would end the test
 * worker or outlive the run. runCli runs them; their --help is fine here.
 */
const PROCESS_COMMANDS = new Set(['serve', 'run']);

/** commander's own exit (help, version, a usage error), or a process.exit, turned into a value. */
class ProgramExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

type ProgramModule = typeof import('../../src/cli/program.js');
let program: Promise<ProgramModule> | undefined;
/** Runs mutate process-wide state (env, cwd, stdout, exit code): one at a time. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * `agentport <args>` in this process, with runCli's result and defaults.
 * The program is the built one (dist/, like runCli's), so what it derives
 * from where its own files are (the CLI path `config` prints, the package
 * entry definition files import) is what the binary says. Around the run:
 * process.argv is the binary's, env overrides are applied (and undone), the
 * working directory is `cwd`, stdout and stderr are captured (and act as
 * pipes, as runCli's do: not a TTY), and the exit code is process.exitCode,
 * which is reset after. What a command leaves running after its action ends
 * is not waited for, as a process would before exiting.
 */
export function runCliInProcess(args: string[], options: CliOptions = {}): Promise<CliRun> {
  const command = args.find((arg) => !arg.startsWith('-'));
  const flags = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  // Help is printed before any action runs.
  const help = flags.includes('--help') || flags.includes('-h');
  if (command !== undefined && PROCESS_COMMANDS.has(command) && !help) {
    return Promise.reject(new Error(`agentport ${command} ends its own process: run it with runCli`));
  }
  const run = queue.then(() => runInProcess(args, options));
  queue = run.catch(() => {});
  return run;
}

async function runInProcess(args: string[], options: CliOptions): Promise<CliRun> {
  // The built program, the one runCli spawns; the types are its source's.
  program ??= import(pathToFileURL(CLI.replace(/main\.js$/, 'program.js')).href) as Promise<ProgramModule>;
  const { buildProgram, reportFailure } = await program;
  const out = { stdout: '', stderr: '' };
  const undo: Array<() => void> = [];
  try {
    undo.push(setEnv({ ...baseEnv(), ...options.env }));
    const cwd = process.cwd();
    if (options.cwd !== undefined) {
      process.chdir(options.cwd);
      undo.push(() => process.chdir(cwd));
    }
    const argv = process.argv;
    process.argv = [process.execPath, CLI, ...args];
    undo.push(() => (process.argv = argv));
    undo.push(capture(process.stdout, (text) => (out.stdout += text)));
    undo.push(capture(process.stderr, (text) => (out.stderr += text)));
    // Definition files run in this process: their console output goes where a process's would, not to the test's console.
    const testConsole = globalThis.console;
    globalThis.console = new Console({ stdout: process.stdout, stderr: process.stderr, colorMode: false });
    undo.push(() => (globalThis.console = testConsole));
    undo.push(
      replace(process, 'exit', (code?: number | string | null) => {
        throw new ProgramExit(Number(code ?? process.exitCode ?? 0));
      }),
    );
    const exitCode = process.exitCode;
    process.exitCode = undefined;
    undo.push(() => (process.exitCode = exitCode));

    const built = await buildProgram(process.argv);
    exitOverride(built);
    try {
      await built.parseAsync(process.argv);
    } catch (error) {
      // An exit ends the process with its code whatever process.exitCode was; anything else is main's to report.
      if (error instanceof ProgramExit) process.exitCode = error.exitCode;
      else reportFailure(error);
    }
    return { code: Number(process.exitCode ?? 0), ...out };
  } finally {
    for (const step of undo.reverse()) step();
  }
}

/** Where commander would call process.exit, it throws instead; set on every command, as each keeps its own. */
function exitOverride(command: import('commander').Command): void {
  command.exitOverride((error) => {
    throw new ProgramExit(error.exitCode);
  });
  for (const sub of command.commands) exitOverride(sub);
}

/** Sets (or, for undefined, deletes) variables of process.env; returns what puts them back. */
function setEnv(values: Record<string, string | undefined>): () => void {
  const before = new Map(Object.keys(values).map((key) => [key, Object.hasOwn(process.env, key) ? process.env[key] : undefined]));
  const apply = (entries: Iterable<[string, string | undefined]>) => {
    for (const [key, value] of entries) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  apply(Object.entries(values));
  return () => apply(before);
}

/** Collects what is written to a stream, which looks like a pipe meanwhile; returns what restores it. */
function capture(stream: NodeJS.WriteStream, collect: (text: string) => void): () => void {
  const write = (
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | ((error?: Error | null) => void),
    callback?: (error?: Error | null) => void,
  ): boolean => {
    collect(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done) process.nextTick(done);
    return true;
  };
  const restoreWrite = replace(stream, 'write', write);
  const restoreTTY = replace(stream, 'isTTY', false);
  return () => {
    restoreTTY();
    restoreWrite();
  };
}

/** Sets a property of a process-wide object; returns what puts back the one it had (its own, or none: the inherited one). */
function replace(target: object, key: string, value: unknown): () => void {
  const own = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true });
  return () => {
    if (own) Object.defineProperty(target, key, own);
    else delete (target as Record<string, unknown>)[key];
  };
}
