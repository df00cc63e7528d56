/**
 * A prompt used as another prompt's tool: its arguments are validated against
 * its `requiredSchema`, it runs as a nested run in a child thread, and its
 * outcome comes back as one string (see docs/subprompt-results.md).
 */
import type { ToolResult } from '../definitions/types.js';
import { isAgentportError } from '../errors.js';
import type { ContentPart, StoredMessage } from '../store/types.js';
import { openTurn } from './turn.js';
import { toolsetForTurn } from './toolset.js';
import { recordStatus } from './threadStatus.js';
import { subpromptInput } from './subpromptInput.js';
import type { RunFrame } from './frame.js';
import { HookRunner } from './hooks.js';
import type { LoopOutcome } from './loop.js';
import { formatSubpromptResult } from './subpromptResult.js';
import { createThreadState } from './threadState.js';
import type { OfferedSubprompt } from './toolset.js';
import { VariableScope, toolDeclarations } from './variables.js';

type RunLoop = (frame: RunFrame) => Promise<LoopOutcome>;

export async function runSubprompt(parent: RunFrame, tool: OfferedSubprompt, argumentText: string, runLoop: RunLoop): Promise<ToolResult> {
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
  const scope = childScope(parent, tool);
  const missing = scope.missing();
  if (missing.length) {
    return { status: 'error', error: `cannot run ${tool.name}: missing required variables ${missing.map((d) => `${d.name} (${d.declaredBy})`).join(', ')}` };
  }

  const thread = await services.store.createThread({ prompt: target.name, parentId: parent.thread.id });
  const hooks = new HookRunner(
    HookRunner.select(services.registry.hooks, target.definition.hooks, agent?.definition.hooks),
    (line) => services.log(parent.redactor.text(line)),
  );
  const redactor = parent.redactor.child();
  for (const secret of scope.secretValues()) redactor.add(secret);
  const state = createThreadState({
    store: services.store,
    threadId: thread.id,
    prompt: target.name,
    scope,
    execution: { stepCount: 0, currentSide: 'a', abortSignal: parent.signal },
  });
  await hooks.notify('after_thread_created', state, thread);

  let content: string | ContentPart[] = input.message;
  if (input.attachmentPaths.length) {
    try {
      content = [{ type: 'text', text: input.message }, ...(await copyAttachments(parent, thread.id, input.attachmentPaths))];
    } catch (error) {
      await services.store.updateThread(thread.id, { status: 'failed' });
      return { status: 'error', error: `cannot attach files to ${tool.name}: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  let opened;
  try {
    opened = await openTurn(target, input.args, content);
  } catch (error) {
    await services.store.updateThread(thread.id, { status: 'failed' });
    return { status: 'error', error: error instanceof Error ? error.message : String(error) };
  }
  const messages: StoredMessage[] = [];
  for (const message of opened.turn) messages.push(await services.store.appendMessage(thread.id, redactor.deep(message)));
  const parentChat = target.definition.includeChat ? parent.messages.filter((m) => m.role === 'user' || m.role === 'assistant') : [];

  let outcome: LoopOutcome;
  try {
    outcome = await runLoop({
      services,
      thread,
      prompt: target,
      agent,
      scope,
      redactor,
      hooks,
      signal: parent.signal,
      progress: parent.progress,
      ancestry: chain,
      turnStartSeq: messages[0]?.seq ?? 1,
      messages,
      parentChat,
      preamble: opened.preamble,
      toolset: toolsetForTurn(services, target, opened.extraTools),
    });
  } catch (error) {
    if (isAgentportError(error) && error.code === 'CANCELLED') {
      await services.store.updateThread(thread.id, { status: 'cancelled' });
    }
    throw error;
  }
  await recordStatus(services.store, thread, outcome.status === 'completed' ? 'idle' : 'failed');
  const text = formatSubpromptResult(
    { prompt: target.name, text: outcome.text, toolCalls: outcome.toolCalls, errors: outcome.errors },
    tool.config,
  );
  // A sub-prompt that produced nothing but errors failed; otherwise its string is the result.
  return outcome.status !== 'completed' && !outcome.text ? { status: 'error', error: text } : { status: 'success', result: text };
}

/** Parent values flow down, except names the child declares `scoped`. */
function childScope(parent: RunFrame, tool: OfferedSubprompt): VariableScope {
  const { registry, env } = parent.services;
  const target = tool.prompt.definition;
  const declared = [
    ...(target.variables ?? []).map((v) => ({ ...v, declaredBy: `prompt "${tool.prompt.name}"` })),
    ...(target.tools ?? []).flatMap((ref) => {
      const name = typeof ref === 'string' ? ref : ref.name;
      const fn = registry.tools.get(name);
      return fn ? toolDeclarations(name, fn.definition) : [];
    }),
  ];
  const probe = new VariableScope(declared, {});
  const inherited = Object.fromEntries(parent.scope.entries().filter(([name]) => !probe.isScoped(name)));
  const fromEnv = Object.fromEntries(declared.filter((d) => !d.scoped && env[d.name]).map((d) => [d.name, env[d.name]!]));
  return new VariableScope(declared, {
    // The caller's `{ name, env }` config for this sub-prompt sits just above its own env.
    defaults: { ...target.env, ...tool.env },
    toolDefaults: new Map(parent.services.toolsetFor(tool.prompt).map((t) => [t.name, t.env] as const)),
    layers: [registry.agents.get(tool.name)?.definition.env, fromEnv, inherited],
  });
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
