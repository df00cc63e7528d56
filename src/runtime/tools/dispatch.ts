/**
 * Runs one tool call by the kind of tool: function tools, sub-prompts (and
 * agents called as tools), control tools, and the tool_search of deferred
 * tools. Used for the model's tool calls and for ThreadState.invokeTool.
 */
import type { ToolResult } from '../../definitions/types.js';
import { errorMessage, isStop } from '../../errors.js';
import { TOOL_SEARCH_NAME } from '../../search/toolSearchTool.js';
import type { AttachmentRef } from '../../store/types.js';
import type { ControlRole, Run, Side } from '../run/types.js';
import { argumentsOrEmpty, parseArguments } from './arguments.js';
import { executeFunctionTool, type ExecutedTool } from './functionTool.js';
import { runSubprompt } from './subprompt.js';
import { runLifecycleTool, runSubagentTool } from '../subagents/lifecycle.js';
import { threadState } from '../state/threadState.js';
import { withLoadedTools } from './deferredTools.js';
import type { OfferedControlTool } from './toolset.js';
import { joinUpstreamTools, runUpstreamTool } from './upstreamTools.js';

export async function runTool(run: Run, side: Side, name: string, argumentText: string): Promise<ExecutedTool> {
  let tool = side.toolset.find((t) => t.name === name);
  if (!tool && run.services.upstream && name.includes('__')) {
    // An upstream tool called before the side's first model step (ThreadState.invokeTool): its list joins now.
    await joinUpstreamTools(run, side);
    tool = side.toolset.find((t) => t.name === name);
  }
  const none: AttachmentRef[] = [];
  if (!tool && side.deferred.active && name === TOOL_SEARCH_NAME) {
    const searched = await side.deferred.search(argumentText);
    if (searched.found.length)
      run.thread = await run.services.patchThreadMeta(run.thread.id, (meta) => withLoadedTools(meta, side.deferred));
    return { result: searched.result, args: argumentsOrEmpty(argumentText), attachments: none };
  }
  if (!tool) {
    const available = side.toolset.map((t) => t.name).join(', ') || 'none';
    return {
      result: { status: 'error', error: `There is no tool named "${name}". Available tools: ${available}.` },
      args: argumentsOrEmpty(argumentText),
      attachments: none,
    };
  }
  switch (tool.kind) {
    case 'function': {
      // The tool config's static options reach the tool as state.context.options while it runs
      // (restored after, for a tool that invokes another).
      const outer = run.context.options;
      run.context.options = tool.options;
      try {
        return await executeFunctionTool({
          tool,
          argumentText,
          stateFor: (signal) => threadState(run, side, tool, signal),
          signal: run.signal,
          timeoutMs: tool.timeoutMs ?? run.services.toolTimeoutMs,
          store: run.services.store,
        });
      } finally {
        if (outer === undefined) delete run.context.options;
        else run.context.options = outer;
      }
    }
    case 'subprompt':
      return { result: await runSubprompt(run, tool, argumentText), args: argumentsOrEmpty(argumentText), attachments: none };
    case 'control':
      return { ...runControlTool(tool, argumentText), attachments: none };
    case 'upstream':
      return runUpstreamTool(run, side, tool, argumentText);
    case 'subagent':
    case 'lifecycle': {
      let result: ToolResult;
      try {
        result =
          tool.kind === 'subagent'
            ? await runSubagentTool(run, side, tool, argumentText)
            : await runLifecycleTool(run, side, tool, argumentText);
      } catch (error) {
        if (isStop(error, run.thread.id)) throw error;
        result = { status: 'error', error: errorMessage(error) };
      }
      // Files a subagent handed over are already in this thread: they link to the result message.
      const { attachments, ...rest } = result;
      return {
        result: rest,
        args: argumentsOrEmpty(argumentText),
        attachments: (attachments ?? []).filter((a): a is AttachmentRef => 'path' in a && 'id' in a),
      };
    }
  }
}

const CONTROL_RESULTS: Record<ControlRole, string> = {
  session_stop: 'The session is ending.',
  session_fail: 'The session is ending as failed.',
  session_status: 'Status reported.',
  stop_tool: 'Your turn is over.',
};

function runControlTool(tool: OfferedControlTool, argumentText: string): { result: ToolResult; args: Record<string, unknown> } {
  let args: Record<string, unknown>;
  try {
    args = parseArguments(argumentText);
  } catch (error) {
    return { result: { status: 'error', error: `Invalid arguments for ${tool.name}: ${errorMessage(error)}` }, args: {} };
  }
  const property = tool.binding.messageProperty;
  if (property && typeof args[property] !== 'string') {
    return { result: { status: 'error', error: `Invalid arguments for ${tool.name}: ${property} must be a string` }, args };
  }
  return { result: { status: 'success', result: CONTROL_RESULTS[tool.binding.role] }, args };
}
