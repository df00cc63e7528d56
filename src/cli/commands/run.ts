/**
 * `agentport run <prompt>`: runs a prompt or agent of the agents folder from
 * the terminal through the same runtime API as the server (`runPrompt`),
 * showing each step, tool call and sub-run as it happens. The thread is kept
 * in the store (the data folder by default), so `--thread` continues it.
 */
import { constants as osConstants } from 'node:os';
import type { Command } from 'commander';
import { DEFAULT_MAX_STEPS } from '../../runtime/limits.js';
import { CommandError, dataDirOf, fail, loadForCommand, printIssues, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';
import { EXIT_INTERRUPTED, onStopSignals, type StopSignal } from '../stopSignals.js';

interface RunOptions extends DirOptions {
  input: string[];
  inputJson?: string;
  thread?: string;
  variable: string[];
  json?: boolean;
  store?: string;
  databaseUrl?: string;
  databaseSchema?: string;
  maxSteps: string;
  toolTimeout: string;
  runTimeout?: string;
}

/** How long a run stopping (at its end, or interrupted by a signal) has to record what it did. */
const SHUTDOWN_GRACE_MS = 1000;
/** After the grace, how long an interrupted run has to settle before the process exits without it. */
const EXIT_DEADLINE_MS = 2000;

/** The exit code of a command a signal ended, as shells report it: 128 + the signal's number. */
const exitCodeOf = (signal: StopSignal): number => 128 + osConstants.signals[signal];

const collect = (value: string, previous: string[]) => [...previous, value];

export function registerRunCommand(program: Command): void {
  program
    .command('run <prompt>')
    .description('run a prompt or agent from the terminal, showing each step, tool call and sub-run as it happens')
    .option(DIR_OPTION, DIR_HELP)
    .option(
      '-i, --input <name=value>',
      "an input of the prompt (repeatable); numbers, true/false and JSON objects/arrays are parsed by the input's type",
      collect,
      [],
    )
    .option('--input-json <json>', 'the inputs as one JSON object (--input values override its keys)')
    .option('-t, --thread <id>', "continue an earlier run's thread (its id is printed after each run)")
    .option('--variable <name=value>', 'a value for a declared variable (repeatable)', collect, [])
    .option('--json', 'print one JSON object on stdout at the end: { thread_id, response, steps, tool_calls, usage, error? }')
    .option('--data-dir <path>', 'where threads are kept (default: $AGENTPORT_DATA_DIR, else .agentport/ beside the agents folder)')
    .option('--store <kind>', 'where threads are kept: file (the data folder), memory, or postgres (env AGENTPORT_STORE)')
    .option('--database-url <url>', 'PostgreSQL connection string for --store postgres (env AGENTPORT_DATABASE_URL)')
    .option('--database-schema <name>', "PostgreSQL schema for agentport's tables (env AGENTPORT_DATABASE_SCHEMA)")
    .option('--max-steps <n>', 'model calls allowed in one run', String(DEFAULT_MAX_STEPS))
    .option('--tool-timeout <s>', 'seconds a tool call may run before it is stopped', '300')
    .option('--run-timeout <s>', 'seconds the whole run may take before it stops with RUN_TIMEOUT (default: no limit)')
    .addHelpText(
      'after',
      '\nExamples:\n  agentport run support --input message="My order has not arrived"\n  agentport run triage_ticket -i subject=Refund -i tags=\'["billing"]\' --json\n  agentport run support --thread <id> --input message="Thanks, and the invoice?"',
    )
    .action(async (name: string, options: RunOptions) => {
      const code = await runCommand(name, options);
      process.exitCode = code;
      // Whatever a tool left open (a socket, a timer) does not keep the terminal waiting.
      setTimeout(() => process.exit(code), 2000).unref();
    });
}

async function runCommand(name: string, options: RunOptions): Promise<number> {
  const guards = await import('../../server/processGuards.js');
  // Definition files and tools run in this process: what they print goes to stderr, redacted; stdout is the answer's.
  const heldConsole = guards.redactConsole();
  const stdout = guards.keepStdoutForProtocol();
  let loaded;
  try {
    loaded = await loadForCommand(options);
    const { hideDeclaredSecrets } = await import('../../runtime/variables/declaredSecrets.js');
    hideDeclaredSecrets(loaded.registry, process.env);
  } finally {
    heldConsole.release();
  }
  printIssues(loaded.issues);
  if (loaded.errors.length)
    throw new CommandError(`not running: ${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);

  const [{ resolveRunTarget }, { parseInputs }] = await Promise.all([import('../run/target.js'), import('../run/inputs.js')]);
  const target = resolveRunTarget(loaded.registry, name);
  const args = parseInputs(name, target.schema, {
    pairs: options.input,
    ...(options.inputJson !== undefined ? { json: options.inputJson } : {}),
  });
  if (options.thread !== undefined) {
    if (!options.thread) throw new CommandError('--thread needs a thread id');
    args.thread_id = options.thread;
  }
  const variables = pairsOf(options.variable, '--variable');
  const maxSteps = Number(options.maxSteps);
  if (!Number.isInteger(maxSteps) || maxSteps < 1)
    throw new CommandError(`--max-steps must be a positive integer, got "${options.maxSteps}"`);
  const toolTimeout = Number(options.toolTimeout);
  if (!(toolTimeout > 0)) throw new CommandError(`--tool-timeout must be a positive number of seconds, got "${options.toolTimeout}"`);
  const runTimeout = options.runTimeout === undefined ? undefined : Number(options.runTimeout);
  if (runTimeout !== undefined && !(runTimeout > 0))
    throw new CommandError(`--run-timeout must be a positive number of seconds, got "${options.runTimeout}"`);

  const [{ chooseStore, openStore }, { createRuntime }, { createView, elapsedLabel }, { runJson, summaryLine }, errors] = await Promise.all(
    [
      import('../../store/open.js'),
      import('../../runtime/runtime.js'),
      import('../run/view.js'),
      import('../run/output.js'),
      import('../../errors.js'),
    ],
  );
  let store;
  try {
    store = await openStore(chooseStore(options, dataDirOf(options)));
  } catch (error) {
    throw new CommandError(errors.errorMessage(error));
  }
  const runtime = createRuntime({
    registry: loaded.registry,
    store,
    maxSteps,
    toolTimeoutMs: toolTimeout * 1000,
    ...(runTimeout ? { runTimeoutMs: runTimeout * 1000 } : {}),
  });

  const started = Date.now();
  const view = createView(process.stderr, { live: process.stderr.isTTY === true });
  const cancel = new AbortController();
  let shuttingDown: Promise<void> | undefined;
  const shutdown = () => (shuttingDown ??= runtime.shutdown(SHUTDOWN_GRACE_MS).catch(() => {}));
  /** The signal that interrupted the run (SIGTERM, SIGHUP), if one did. */
  let interruptedBy: StopSignal | undefined;
  /** Set once the run has settled; its exit code once worked out (below). */
  let settled: { code?: number } | undefined;
  // Listened to until the process exits: a repeat while the run stops, or while the store closes, is ignored.
  onStopSignals((signal) => {
    // A run that has settled is only closing the store: it gets the same moment, then the process goes as it would have.
    if (settled) {
      setTimeout(() => process.exit(settled?.code ?? process.exitCode ?? exitCodeOf(signal)), EXIT_DEADLINE_MS).unref();
      return;
    }
    if (signal === 'SIGINT') {
      view.line('cancelling (Ctrl-C again to quit at once)');
      cancel.abort(new errors.AgentportError('CANCELLED', 'the run was cancelled from the terminal (Ctrl-C)'));
      return;
    }
    // Not cancelled: interrupted as a stopping server interrupts it, recorded so, and continued later with --thread.
    interruptedBy = signal;
    view.line(`interrupting (${signal})`);
    void shutdown();
    // A run that does not settle (waiting for a thread another process holds, say) does not hold the process; one that
    // settled in time exits as it settled.
    setTimeout(() => {
      if (settled?.code === undefined)
        process.stderr.write(
          `agentport: the run did not stop within ${(SHUTDOWN_GRACE_MS + EXIT_DEADLINE_MS) / 1000} s of ${signal}; the next start finds it interrupted\n`,
        );
      process.exit(settled?.code ?? exitCodeOf(signal));
    }, SHUTDOWN_GRACE_MS + EXIT_DEADLINE_MS).unref();
  });

  let threadId: string | undefined;
  let result: import('../../runtime/types.js').RunResult | undefined;
  let thrown: import('../../errors.js').ErrorInfo | undefined;
  try {
    result = await runtime.runPrompt({
      target: name,
      args,
      signal: cancel.signal,
      onProgress: (message) => view.line(message),
      onThread: (id) => (threadId = id),
      ...(Object.keys(variables).length ? { variables } : {}),
    });
    threadId = result.threadId;
  } catch (error) {
    thrown = errors.errorInfo(error);
  } finally {
    settled = {};
    view.finish();
    await shutdown();
  }

  const failure = thrown ?? result?.error;
  const cancelled = cancel.signal.aborted && (failure?.code === 'CANCELLED' || failure === undefined);
  const interrupted = interruptedBy !== undefined && failure?.code === 'INTERRUPTED';
  const code = cancelled ? EXIT_INTERRUPTED : interrupted ? exitCodeOf(interruptedBy!) : failure ? 1 : 0;
  settled.code = code;
  if (threadId === undefined) {
    // Refused before a thread was opened (arguments, an unknown thread, a missing variable): nothing ran.
    fail(interrupted ? `interrupted (${interruptedBy}) before the run began: nothing ran` : `${failure!.code}: ${failure!.message}`, code);
    return code;
  }
  if (options.json) {
    stdout.write(`${JSON.stringify(runJson(threadId, result, thrown))}\n`);
  } else if (result?.text) {
    stdout.write(result.text.endsWith('\n') ? result.text : `${result.text}\n`);
  }
  if (failure)
    process.stderr.write(
      interrupted
        ? `agentport: interrupted (${interruptedBy}): what the run did is kept; --thread ${threadId} continues it\n`
        : `agentport: ${cancelled ? 'cancelled' : 'the run ended with an error'}: ${failure.code}: ${failure.message}\n`,
    );
  const summary = summaryLine(threadId, result, elapsedLabel(Date.now() - started));
  process.stderr.write(`${process.stderr.isTTY ? `\x1b[2m${summary}\x1b[22m` : summary}\n`);
  if (process.stderr.isTTY && !options.json)
    process.stderr.write(`\x1b[2mcontinue with: agentport run ${name} --thread ${threadId} --input ...\x1b[22m\n`);
  return code;
}

/** `name=value` pairs as an object; a pair without `=` is refused naming the flag. */
function pairsOf(pairs: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CommandError(`${flag} expects name=value, got "${pair}"`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}
