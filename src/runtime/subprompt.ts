/**
 * A prompt used as another prompt's tool: its arguments are validated against
 * its `requiredSchema`, it runs as a nested run in a child thread, and its
 * outcome comes back as one string (see docs/subprompt-results.md).
 */
import type { ToolResult } from '../definitions/types.js';
import { errorMessage, isAgentportError } from '../errors.js';
import type { ContentPart, NewMessage, StoredMessage } from '../store/types.js';
import { withoutTools } from './context.js';
import type { RunFrame } from './frame.js';
import { HookRunner } from './hooks.js';
import type { LoopOutcome } from './loop.js';
import { subpromptInput } from './subpromptInput.js';
import { formatSubpromptResult } from './subpromptResult.js';
import { createThreadState, type RuntimeThreadState } from './threadState.js';
import { recordStatus } from './threadStatus.js';
import { toolsetForTurn, type OfferedSubprompt } from './toolset.js';
import { openTurn } from './turn.js';
import { VariableScope, declarationsFor, declaredFromEnvironment, toolEnvDefaults } from './variables.js';

type RunLoop = (frame: RunFrame) => Promise<LoopOutcome>;
type StoreMessage = (frame: RunFrame, state: RuntimeThreadState, message: NewMessage) => Promise<StoredMessage>;

export async function runSubprompt(
  parent: RunFrame,
  tool: OfferedSubprompt,
  argumentText: string,
  engine: { runLoop: RunLoop; storeMessage: StoreMessage },
): Promise<ToolResult> {
  const { services } = parent;
  const chain = [...parent.ancestry, tool.prompt.name];
  if (parent.ancestry.length >= services.maxDepth) {
    return {
      status: 'error',
      error: `sub-prompt nesting deeper than ${services.maxDepth} levels (${chain.join(' -> ')}): stopped as runaway recursion`,
    };
  }
  const input = subpromptInput(tool, argumentText);
  if (!input.ok) return { status: 'error', error: input.error };

  const target = tool.prompt;
  const agent = services.registry.agents.get(tool.name);
  let toolset;
  let opened;
  try {
    opened = await openTurn(target, input.args, input.message);
    toolset = toolsetForTurn(services, target, opened.extraTools);
  } catch (error) {
    return { status: 'error', error: errorMessage(error) };
  }

  // Parent values flow down, except names the child declares `scoped`.
  const declared = declarationsFor(target, agent, toolset);
  const probe = new VariableScope(declared, {});
  const inherited = Object.fromEntries(parent.scope.entries().filter(([name]) => !probe.isScoped(name)));
  const scope = new VariableScope(declared, {
    // The caller's `{ name, env }` config for this sub-prompt sits just above its own env.
    defaults: { ...target.definition.env, ...tool.env },
    toolDefaults: toolEnvDefaults(toolset),
    layers: [agent?.definition.env, declaredFromEnvironment(declared, services.env), inherited],
  });
  const missing = scope.missing();
  if (missing.length) {
    return { status: 'error', error: `cannot run ${tool.name}: missing required variables ${missing.map((d) => `${d.name} (${d.declaredBy})`).join(', ')}` };
  }
  const redactor = parent.redactor.child();
  for (const secret of scope.secretValues()) redactor.add(secret);
  const hooks = new HookRunner(
    HookRunner.select(services.registry.hooks, target.definition.hooks, agent?.definition.hooks),
    (line) => services.log(redactor.text(line)),
  );

  const thread = await services.store.createThread({ prompt: target.name, parentId: parent.thread.id });
  const state = createThreadState({
    store: services.store,
    threadId: thread.id,
    prompt: target.name,
    scope,
    execution: { stepCount: 0, currentSide: 'a', abortSignal: parent.signal },
  });
  await hooks.notify('after_thread_created', state, thread);

  if (input.attachmentPaths.length) {
    try {
      opened = await openTurn(target, input.args, input.message, await copyAttachments(parent, thread.id, input.attachmentPaths));
    } catch (error) {
      await recordStatus(services.store, thread, 'failed');
      return { status: 'error', error: `cannot attach files to ${tool.name}: ${errorMessage(error)}` };
    }
  }

  const frame: RunFrame = {
    services,
    thread,
    prompt: target,
    agent,
    scope,
    redactor,
    hooks,
    signal: parent.signal,
    progress: (message) => parent.progress(redactor.text(message)),
    ancestry: chain,
    turnStartSeq: 1,
    messages: [],
    // A sub-prompt with includeChat sees the caller's conversation, as chat only.
    parentChat: target.definition.includeChat ? parent.messages.flatMap(withoutTools) : [],
    preamble: opened.preamble,
    toolset,
  };
  for (const message of opened.turn) await engine.storeMessage(frame, state, message);
  frame.turnStartSeq = frame.messages[0]?.seq ?? 1;

  let outcome: LoopOutcome;
  try {
    outcome = await engine.runLoop(frame);
  } catch (error) {
    if (isAgentportError(error) && error.code === 'CANCELLED') await recordStatus(services.store, frame.thread, 'cancelled');
    throw error;
  }
  await recordStatus(services.store, frame.thread, outcome.status === 'completed' ? 'idle' : 'failed');
  const text = formatSubpromptResult(
    { prompt: target.name, text: outcome.text, toolCalls: outcome.toolCalls, errors: outcome.errors },
    tool.config,
  );
  // A sub-prompt that produced nothing but errors failed; otherwise its string is the result.
  return outcome.status !== 'completed' && !outcome.text ? { status: 'error', error: text } : { status: 'success', result: text };
}

/** Files named by initAttachmentsProperty are copied into the child thread, same paths. */
async function copyAttachments(parent: RunFrame, childThreadId: string, paths: string[]): Promise<ContentPart[]> {
  const parts: ContentPart[] = [];
  for (const path of paths) {
    const file = await parent.services.store.readFile(parent.thread.id, path);
    if (!file) throw new Error(`attachment ${path} does not exist in the calling thread`);
    const ref = await parent.services.store.writeFile(childThreadId, file.ref.path, file.data, {
      mimeType: file.ref.mimeType,
      name: file.ref.name,
    });
    parts.push(
      ref.mimeType.startsWith('image/')
        ? { type: 'image', path: ref.path, mimeType: ref.mimeType, description: ref.name }
        : { type: 'file', path: ref.path, mimeType: ref.mimeType, name: ref.name },
    );
  }
  return parts;
}
