/**
 * A prompt or agent used as another prompt's tool: its arguments are
 * validated against its input schema, it runs as a nested run in a child
 * thread (opened like any run), and its outcome comes back as one string
 * (see docs/subprompt-results.md).
 */
import { addUsage } from '../../models/usage.js';
import type { ToolResult } from '../../definitions/types.js';
import { errorMessage, isStop } from '../../errors.js';
import { openRun } from '../run/openRun.js';
import type { Run } from '../run/types.js';
import { subpromptInput } from './subpromptInput.js';
import { formatSubpromptResult } from './subpromptResult.js';
import type { OfferedSubprompt } from './toolset.js';

export async function runSubprompt(parent: Run, tool: OfferedSubprompt, argumentText: string): Promise<ToolResult> {
  const { services } = parent;
  if (parent.ancestry.length >= services.maxDepth) {
    const chain = [...parent.ancestry, tool.prompt.name].join(' -> ');
    return {
      status: 'error',
      error: `sub-prompt nesting deeper than ${services.maxDepth} levels (${chain}): stopped as runaway recursion`,
    };
  }
  let child: Run;
  try {
    const input = subpromptInput(tool, argumentText);
    child = await openRun(services, {
      target: tool.name,
      agent: tool.agent,
      prompt: tool.prompt,
      args: input.args,
      userMessage: input.message,
      signal: parent.signal,
      progress: parent.progress,
      parent,
      configEnv: tool.env,
      attachmentPaths: input.attachmentPaths,
    });
  } catch (error) {
    if (isStop(error, parent.thread.id)) throw error;
    return { status: 'error', error: errorMessage(error) };
  }
  let outcome;
  try {
    outcome = await services.engine.runToCompletion(child).finally(() => {
      // What the sub-prompt's model calls cost is part of its caller's run.
      parent.tally.usage = addUsage(parent.tally.usage, child.tally.usage);
    });
  } catch (error) {
    // The sub-prompt's thread lost its lock: its run stopped, and for the caller that is a tool that failed.
    if (isStop(error, child.thread.id) && !isStop(error, parent.thread.id)) return { status: 'error', error: errorMessage(error) };
    throw error;
  }
  const text = formatSubpromptResult(
    {
      prompt: tool.prompt.name,
      text: outcome.error ? null : outcome.text,
      toolCalls: child.tally.toolCalls,
      errors: outcome.error ? [outcome.error.message] : [],
    },
    tool.config,
  );
  // A sub-prompt that produced nothing but errors failed; otherwise its string is the result.
  return outcome.error ? { status: 'error', error: text } : { status: 'success', result: text };
}
