/**
 * The subagent tool kinds. A non-resumable subagent is a tool call: one
 * instance, one session (blocking or on its own). Resumable subagents are
 * reached through `subagent_create` (a new named instance) and
 * `subagent_message` (more work for an instance; a busy one gets it when
 * its current session ends).
 */
import type { ToolResult } from '../../definitions/types.js';
import { errorMessage, hasCode } from '../../errors.js';
import type { Run, Side } from '../run/types.js';
import { parseArguments } from '../tools/arguments.js';
import { subpromptInput } from '../tools/subpromptInput.js';
import type { OfferedLifecycleTool, OfferedSubagent } from '../tools/toolset.js';
import { requestVariables } from './envRequests.js';
import { atMaxInstances, childRecords, findChild, instanceName, nameTaken, statusOf } from './registry.js';
import { messageInstance, startInstance, type SpawnRequest } from './spawn.js';

export async function runSubagentTool(run: Run, side: Side, tool: OfferedSubagent, argumentText: string): Promise<ToolResult> {
  const { spec } = tool;
  const input = subpromptInput({ name: tool.name, prompt: spec.receiving, config: spec.config }, argumentText);
  const nameProperty = spec.config.initAgentNameProperty;
  const given = nameProperty ? input.args[nameProperty] : undefined;
  return start(run, side, {
    spec,
    name: typeof given === 'string' && given.trim() ? given.trim() : instanceName(run.thread.meta, spec.agent.name),
    description: spec.agent.definition.toolDescription ?? '',
    args: input.args,
    message: input.message,
    attachments: input.attachmentPaths,
    blocking: spec.blocking,
  });
}

export async function runLifecycleTool(run: Run, side: Side, tool: OfferedLifecycleTool, argumentText: string): Promise<ToolResult> {
  const invalid = (why: string): ToolResult => ({ status: 'error', error: `Invalid arguments for ${tool.name}: ${why}` });
  let args: Record<string, unknown>;
  try {
    args = parseArguments(argumentText);
  } catch (error) {
    return invalid(errorMessage(error));
  }
  return tool.action === 'create' ? create(run, side, tool, args, invalid) : message(run, tool, args, invalid);
}

async function create(
  run: Run,
  side: Side,
  tool: OfferedLifecycleTool,
  args: Record<string, unknown>,
  invalid: (why: string) => ToolResult,
): Promise<ToolResult> {
  const spec = tool.subagents.length === 1 ? tool.subagents[0] : tool.subagents.find((s) => s.agent.name === args.subagent);
  if (!spec) return invalid(`subagent must be one of ${tool.subagents.map((s) => s.agent.name).join(', ')}`);
  const name = typeof args.name === 'string' ? args.name.trim() : '';
  if (!name) return invalid('name must be a non-empty string');
  if (nameTaken(run.thread.meta, name))
    return invalid(`an instance named "${name}" already exists; message it with subagent_message, or choose another name`);
  if (atMaxInstances(run.thread.meta, spec)) {
    return {
      status: 'error',
      error: `${spec.agent.name} already has its maximum of ${(spec.resumable as { maxInstances: number }).maxInstances} instances; send work to one of them with subagent_message.`,
    };
  }
  const input = subpromptInput(
    { name: `${tool.name} arguments`, prompt: spec.receiving, config: spec.config },
    JSON.stringify(args.arguments ?? {}),
  );
  return start(run, side, {
    spec,
    name,
    description: spec.agent.definition.toolDescription ?? '',
    args: input.args,
    message: input.message,
    attachments: input.attachmentPaths,
    blocking: spec.blocking,
  });
}

async function message(
  run: Run,
  tool: OfferedLifecycleTool,
  args: Record<string, unknown>,
  invalid: (why: string) => ToolResult,
): Promise<ToolResult> {
  if (typeof args.to !== 'string' || !args.to) return invalid('to must be the name or reference of an instance');
  if (typeof args.message !== 'string') return invalid('message must be a string');
  const attachments = Array.isArray(args.attachments) ? args.attachments.map(String) : [];
  const record = findChild(run.thread.meta, args.to);
  const spec = record && tool.subagents.find((s) => s.agent.name === record.agent);
  if (!record || !spec) {
    const known = childRecords(run.thread.meta)
      .filter((r) => r.resumable)
      .map((r) => r.name);
    return invalid(`no instance "${args.to}"${known.length ? `; instances: ${known.join(', ')}` : '; start one with subagent_create'}`);
  }
  if (statusOf(run.services, record) === 'terminated')
    return { status: 'error', error: `"${record.name}" was terminated and takes no more messages.` };
  return messageInstance(run, record, args.message, attachments, spec.blocking);
}

/** Starts an instance; required scoped variables nobody provided yet turn into a request for them. */
export async function start(run: Run, side: Side, request: SpawnRequest): Promise<ToolResult> {
  try {
    return (await startInstance(run, side, request)).result;
  } catch (error) {
    const missing = hasCode(error, 'MISSING_VARIABLES')
      ? ((error.data?.variables ?? []) as Array<{ name: string; description: string; type: 'secret' | 'text'; scoped: boolean }>)
      : [];
    if (missing.length === 0 || missing.some((v) => !v.scoped)) throw error;
    const { spec, values: _values, ...rest } = request;
    return requestVariables(
      run,
      side,
      spec,
      rest,
      missing.map(({ name, description, type }) => ({ name, description, type })),
    );
  }
}
