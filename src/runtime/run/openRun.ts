/**
 * Opening a run, written once for every kind of run: a top-level MCP or CLI
 * call, a sub-prompt or agent called as a tool. It renders the opening turn,
 * builds the sides, resolves variables (a missing required one fails before a
 * thread exists), sets up redaction and hooks, creates or continues the
 * thread, and stores the opening messages.
 */
import type { AgentDefinition, ModelRequestMessage, ThreadState } from '../../definitions/types.js';
import { AgentportError, errorMessage } from '../../errors.js';
import type { Entry, LoadedPrompt } from '../../registry/types.js';
import type { AppendOptions, ContentPart, NewMessage, ThreadRecord, VariableValue } from '../../store/types.js';
import { buildSide, enableOptionalSubagents } from '../agents/sides.js';
import { storeMessage, writeOpening } from '../loop/storeMessage.js';
import { Execution } from '../state/execution.js';
import { copyFilesAcross } from '../state/files.js';
import { TERMINATED_META, threadState } from '../state/threadState.js';
import { loadedToolsOf } from '../tools/deferredTools.js';
import { specsOf } from '../tools/toolset.js';
import { withoutTools } from '../loop/context.js';
import { Redactor } from '../variables/secrets.js';
import { VariableScope, declarationsFor, declaredFromEnvironment, toolEnvDefaults } from '../variables/variables.js';
import { attachToTurn, openPlainTurn, openTurn } from './openTurn.js';
import { INTERRUPTED_FROM_META, recordThrown } from './threadStatus.js';
import { loadHistory, needsHistoryAtOpen } from './history.js';
import { NO_USAGE } from '../../models/usage.js';
import { ownerMeta, ownerOf } from './owner.js';
import type { Elicit, Run, Services, Side } from './types.js';

export interface RunSpec {
  /** The prompt or agent name the thread runs. */
  target: string;
  agent: Entry<AgentDefinition> | undefined;
  /** Side A's prompt (the prompt itself when no agent). */
  prompt: LoadedPrompt;
  /** Validated arguments. */
  args: Record<string, unknown>;
  /** The opening user message's text. */
  userMessage: string;
  /** An existing thread to continue. */
  existing?: ThreadRecord;
  /** Values supplied with the call (top-level runs). */
  variables?: Record<string, string>;
  signal: AbortSignal;
  /** The controller whose signal `signal` is, given over: the run's own, instead of a new one linked to it. */
  controller?: AbortController;
  progress: (message: string) => void;
  /** The calling run, for a sub-prompt: values, secrets and chat flow down from it. */
  parent?: Run;
  /** `env` of the caller's `{ name, env }` tool config (sub-prompts). */
  configEnv?: Record<string, string>;
  /** Paths in the parent's files to copy into the new thread and attach to the opening message. */
  attachmentPaths?: string[];
  /** Messages that open the turn instead of the rendered user message (a queued message). */
  opening?: NewMessage[];
  /** Meta of a thread this run creates. */
  threadMeta?: Record<string, unknown>;
  /** The side that takes the first turn (default a). */
  firstSide?: 'a' | 'b';
  /** Names the run in progress and logs (a subagent instance's name). */
  label?: string;
  /** A subagent's thread is its own: it never sees its parent's conversation, whatever includeChat says. */
  isolated?: boolean;
  elicit?: Elicit;
}

export async function openRun(services: Services, spec: RunSpec): Promise<Run> {
  const { agent, prompt, parent, existing } = spec;
  if (existing?.meta?.[TERMINATED_META]) {
    throw new AgentportError('THREAD_TERMINATED', `thread ${existing.id} was terminated and cannot be continued`, {
      threadId: existing.id,
    });
  }
  const dual = agent?.definition.type === 'dual_ai' && agent.definition.sideB !== undefined;
  const opened = prompt.prompty ? await openTurn(prompt, spec.args, spec.userMessage) : openPlainTurn(prompt, spec.userMessage);
  const promptB = dual ? services.registry.prompts.get(agent.definition.sideB!.prompt) : undefined;
  const openedB = promptB ? await openTurn(promptB, spec.args, spec.userMessage) : undefined;
  const loadedTools = loadedToolsOf(existing?.meta);

  // Hook failure lines pass this redactor, which learns the secrets once variables are resolved.
  const redactor = parent ? parent.redactor.child() : new Redactor();
  const log = (line: string) => services.log(redactor.text(line));
  const sides: { a: Side; b?: Side } = {
    a: buildSide(
      services,
      {
        key: 'a',
        prompt,
        config: agent?.definition.sideA,
        agent,
        preamble: opened.preamble,
        extraTools: opened.extraTools,
        loadedTools,
        runLabel: spec.label,
      },
      log,
    ),
  };
  if (promptB && openedB) {
    sides.b = buildSide(
      services,
      {
        key: 'b',
        prompt: promptB,
        config: agent!.definition.sideB,
        agent,
        preamble: openedB.preamble,
        extraTools: openedB.extraTools,
        loadedTools,
        runLabel: spec.label,
      },
      log,
    );
  }

  refuseUndeclared(spec, sides);
  const stored = existing ? await services.store.getVariables(existing.id) : [];
  const scope = variableScope(services, spec, sides, stored);
  const missing = scope.missing();
  if (missing.length) {
    throw new AgentportError(
      'MISSING_VARIABLES',
      `cannot run "${spec.target}": missing required variables: ${missing
        .map((d) => `${d.name} (${d.declaredBy}${d.description ? `: ${d.description}` : ''})`)
        .join(', ')}. Set them in the server's environment or pass them with the call.`,
      {
        missing: missing.map((d) => d.name),
        variables: missing.map((d) => ({ name: d.name, description: d.description, type: d.type, scoped: d.scoped === true })),
      },
    );
  }
  for (const secret of scope.secretValues()) redactor.add(secret);
  // Values a tool set on the thread without a declaration keep the type they were set with.
  for (const variable of stored) {
    if (variable.secret) redactor.add(variable.value);
    if (!scope.declared.some((d) => d.name === variable.name) && spec.variables?.[variable.name] === undefined) {
      scope.set(variable.name, variable.value, variable.secret ? 'secret' : 'text');
    }
  }

  // A run stops when its caller cancels or when the server shuts down.
  // The run's own signal: it follows the caller's, and shutdown aborts it (see Runtime.shutdown).
  const controller = spec.controller ?? new AbortController();
  const signal = controller.signal;
  if (services.stopping.signal.aborted) controller.abort(services.stopping.signal.reason);
  else if (spec.signal.aborted) controller.abort(spec.signal.reason);
  else if (signal !== spec.signal) spec.signal.addEventListener('abort', () => controller.abort(spec.signal.reason), { once: true });
  // A child's thread names its parent: the parent is written first.
  if (parent && !existing) await writeOpening(parent);
  const thread =
    existing ??
    (await services.store.createThread({
      prompt: spec.target,
      ...(parent ? { parentId: parent.thread.id } : {}),
      // A sub-prompt's or subagent's thread belongs to whoever owns its parent (run/owner.ts).
      meta: { ...ownerMeta(ownerOf(parent?.thread)), ...spec.threadMeta, arguments: redactor.deep(spec.args) },
    }));
  const run: Run = {
    services,
    thread,
    agent,
    dual: sides.b !== undefined,
    sides,
    args: spec.args,
    scope,
    redactor,
    signal,
    progress: (message) => spec.progress(redactor.text(message)),
    ancestry: [...(parent?.ancestry ?? []), prompt.name],
    sessionStartSeq: Number.POSITIVE_INFINITY,
    messages: [],
    // A new thread has no earlier turns; a continued one reads them when needed (run/history.ts).
    history: !existing,
    // A sub-prompt with includeChat sees the caller's conversation, as chat only.
    parentChat: parent && !spec.isolated && prompt.definition.includeChat ? (await loadHistory(parent)).flatMap(withoutTools) : [],
    execution: new Execution(signal),
    queue: [],
    context: {},
    tally: { toolCalls: [], steps: 0, usage: NO_USAGE },
    finished: false,
    abort: (reason) => controller.abort(reason),
    firstSide: spec.firstSide === 'b' && sides.b ? 'b' : 'a',
    ...(parent ? { parent } : {}),
    ...((spec.elicit ?? parent?.elicit) ? { elicit: spec.elicit ?? parent?.elicit } : {}),
  };
  enableOptionalSubagents(run);
  if (!run.history && needsHistoryAtOpen(run)) await loadHistory(run);

  try {
    await startThread(run, spec, opened.turn, !existing);
  } catch (error) {
    // The thread exists now: a failure here must not leave it looking idle.
    await recordThrown(services, run.thread.id, error);
    throw redactor.error(error);
  }
  return run;
}

const DEFERRED: AppendOptions = { withNextWrite: true };

/**
 * Values sent with a call must be for names the run uses: declared by its
 * prompts, agent or tools, or read by its subagent configs (optional flags,
 * immediate names and scoped values). Anything else is refused, never stored.
 */
function refuseUndeclared(spec: RunSpec, sides: { a: Side; b?: Side }): void {
  if (!spec.variables || spec.parent) return;
  const used = new Set<string>();
  for (const side of [sides.a, sides.b]) {
    if (!side) continue;
    for (const d of declarationsFor(side.prompt, spec.agent, side.toolset)) used.add(d.name);
    for (const sub of side.toolset.flatMap(specsOf)) {
      if (sub.optional) used.add(sub.optional);
      const immediate = sub.config.immediate;
      if (typeof immediate === 'object')
        for (const name of [immediate.nameEnv, immediate.descriptionEnv, ...(immediate.scopedEnv ?? [])]) if (name) used.add(name);
    }
  }
  const unknown = Object.keys(spec.variables).filter((name) => !used.has(name));
  if (unknown.length) {
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      `"${spec.target}" does not use the variable${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}: only declared variables can be sent with a call (nothing was stored)`,
      { unknown },
    );
  }
}

/** Hooks of a new thread, the call's values, system messages, then the opening messages. */
async function startThread(run: Run, spec: RunSpec, rendered: NewMessage[], isNew: boolean): Promise<void> {
  const { services, thread, sides } = run;
  const state = threadState(run, sides.a);
  if (isNew && sides.a.hooks.has('after_thread_created')) {
    await sides.a.hooks.notify('after_thread_created', state, {
      id: thread.id,
      prompt: thread.prompt,
      ...(thread.parentId ? { parentId: thread.parentId } : {}),
      createdAt: thread.createdAt,
    });
  }
  if (spec.variables) await services.store.setVariables(thread.id, valuesToStore(spec.variables, run.scope));
  for (const side of [sides.a, sides.b]) {
    if (side?.hooks.has('after_system_message')) side.preamble = await systemMessageHooks(side, threadState(run, side));
  }

  let turn = spec.opening ?? rendered;
  const interruption = interruptedSession(run);
  if (interruption) {
    // The interrupted turn is shown again, with a note of what did not complete, before the new message.
    turn = [interruption.note, ...turn];
    run.sessionStartSeq = interruption.fromSeq;
  }
  if (spec.attachmentPaths?.length && spec.parent) {
    try {
      turn = attachToTurn(turn, await copyAttachments(spec.parent, thread.id, spec.attachmentPaths));
    } catch (error) {
      throw new AgentportError('INVALID_ARGUMENTS', `cannot attach files to ${spec.target}: ${errorMessage(error)}`);
    }
  }
  // A new top-level thread's opening messages are written with its first answer (one write, off the way to
  // the model); a run still going after a moment is marked running, which writes them (execute.ts). Only its
  // caller knows the thread until then. (A sub-prompt's or subagent's id is in its parent's records at once.)
  const deferred = isNew && !spec.parent ? DEFERRED : undefined;
  for (const message of turn) {
    const stored = await storeMessage(run, sides.a, state, message, deferred);
    run.sessionStartSeq = Math.min(run.sessionStartSeq, stored.seq);
  }
}

/**
 * A thread whose last run did not end: interrupted at shutdown, or left
 * `running` by a process that is gone (nothing runs it here). The model is
 * shown that run's messages again, and told which tool calls did not
 * complete, so it does not blindly repeat the ones that did.
 */
function interruptedSession(run: Run): { note: NewMessage; fromSeq: number } | undefined {
  const { thread, messages, services } = run;
  const crashed = thread.status === 'running' && !services.activeRuns.has(thread.id);
  if (thread.status !== 'interrupted' && !crashed) return undefined;
  const recorded = thread.meta?.[INTERRUPTED_FROM_META];
  const lastUser = messages.findLast((m) => m.role === 'user')?.seq;
  const fromSeq = typeof recorded === 'number' ? recorded : (lastUser ?? 1);
  const session = messages.filter((m) => m.seq >= fromSeq);
  const answered = new Map(session.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m] as const));
  const incomplete = session
    .flatMap((m) => m.toolCalls ?? [])
    .filter((call) => !answered.has(call.id) || answered.get(call.id)?.meta?.interrupted === true)
    .map((call) => `${call.name}(${call.arguments})`);
  const text =
    'Note: the previous turn of this conversation was interrupted because the server stopped before it finished. ' +
    (incomplete.length
      ? `These tool calls did not complete: ${incomplete.join('; ')}. Tool calls with results above did complete: check them before repeating anything.`
      : 'Every tool call above that has a result did complete.');
  return { note: { role: 'user', content: text, meta: { interruption: true } }, fromSeq };
}

/**
 * Values merge from the lowest layer up: the prompts' env (and a sub-prompt
 * caller's tool config env), tool config env per tool, the agent's env, the
 * server's environment (declared names only), then for a top-level call the
 * thread's stored values and the call's values, or for a sub-prompt the
 * parent's values (except names the child declares `scoped`).
 */
function variableScope(services: Services, spec: RunSpec, sides: { a: Side; b?: Side }, stored: readonly VariableValue[]): VariableScope {
  const { agent, parent } = spec;
  const toolset = [...sides.a.toolset, ...(sides.b?.toolset ?? [])];
  const declared = [
    ...declarationsFor(sides.a.prompt, agent, sides.a.toolset),
    ...(sides.b ? declarationsFor(sides.b.prompt, undefined, sides.b.toolset) : []),
  ];
  const agentEnv = { ...agent?.definition.tenvs, ...agent?.definition.env };
  const fromServer = declaredFromEnvironment(declared, services.env);
  const defaults = { ...sides.b?.prompt.definition.env, ...sides.a.prompt.definition.env, ...spec.configEnv };
  const own = [...stored.map((v) => v.name), ...Object.keys(spec.variables ?? {})];
  if (parent) {
    // A name the child declares scoped is not inherited, unless the parent's value is its subtree's own.
    const probe = new VariableScope(declared, {});
    const inherited = parent.scope.entries().filter(([name]) => !probe.isScoped(name) || parent.scope.passesScoped(name));
    return new VariableScope(declared, {
      defaults,
      toolDefaults: toolEnvDefaults(toolset),
      layers: [
        agentEnv,
        fromServer,
        Object.fromEntries(inherited),
        Object.fromEntries(stored.map((v) => [v.name, v.value])),
        spec.variables,
      ],
      owned: [...own, ...inherited.map(([name]) => name).filter((name) => parent.scope.passesScoped(name))],
    });
  }
  return new VariableScope(declared, {
    defaults,
    toolDefaults: toolEnvDefaults(toolset),
    layers: [agentEnv, fromServer, Object.fromEntries(stored.map((v) => [v.name, v.value])), spec.variables],
    owned: own,
  });
}

/** The after_system_message hooks may rewrite each system message of the preamble. */
async function systemMessageHooks(side: Side, state: ThreadState): Promise<ModelRequestMessage[]> {
  const out: ModelRequestMessage[] = [];
  for (const message of side.preamble) {
    if (message.role === 'system' && typeof message.content === 'string') {
      out.push({ ...message, content: String(await side.hooks.transform('after_system_message', state, message.content)) });
    } else out.push(message);
  }
  return out;
}

/** Values nobody declared are kept as secrets, like new keys set with setEnv: their nature is unknown. */
function valuesToStore(values: Record<string, string>, scope: VariableScope): VariableValue[] {
  return Object.entries(values).map(([name, value]) => ({
    name,
    value,
    secret: scope.isSecret(name) || !scope.declared.some((d) => d.name === name),
    scoped: scope.isScoped(name),
  }));
}

/** Files named by initAttachmentsProperty are copied into the child thread's /attachments/ and attached. */
async function copyAttachments(parent: Run, childThreadId: string, paths: string[]): Promise<ContentPart[]> {
  const refs = await copyFilesAcross(parent.services.store, parent.thread.id, childThreadId, paths);
  return refs.map((ref): ContentPart =>
    ref.mimeType.startsWith('image/')
      ? { type: 'image', path: ref.path, mimeType: ref.mimeType, description: ref.name }
      : { type: 'file', path: ref.path, mimeType: ref.mimeType, name: ref.name },
  );
}
