/**
 * Subagents whose required `scoped` variables have no value cannot start:
 * the variables are not inherited, someone must provide them. The runtime
 * records a request (in the parent thread's meta) and answers
 * `subagent_env_required` with its id and what is needed (names,
 * descriptions, secret or text; never values). The values then come through
 * `GET/POST /threads/{parent}/variables/{request}` on the HTTP transport, or
 * at once through an MCP elicitation form when the client supports it. The
 * values are stored with the child thread (secrets encrypted) and the child
 * starts.
 */
import { randomUUID } from 'node:crypto';
import type { ToolResult } from '../../definitions/types.js';
import { AgentportError } from '../../errors.js';
import type { Run, Side } from '../run/types.js';
import type { SubagentSpec } from '../tools/toolset.js';
import { runInstance, spawn, type SpawnRequest } from './spawn.js';

const PENDING_META = 'pendingSubagents';

export interface NeededVariable {
  name: string;
  description: string;
  type: 'secret' | 'text';
}

/** A deferred instance waiting for its variables. */
export interface PendingRequest {
  id: string;
  subagent: string;
  name: string;
  description: string;
  args: Record<string, unknown>;
  message?: string;
  attachments?: readonly string[];
  blocking: boolean;
  immediate?: boolean;
  needed: NeededVariable[];
}

function pendingOf(meta: Record<string, unknown> | undefined): Record<string, PendingRequest> {
  const value = meta?.[PENDING_META];
  return typeof value === 'object' && value !== null ? (value as Record<string, PendingRequest>) : {};
}

export function pendingRequest(meta: Record<string, unknown> | undefined, id: string): PendingRequest | undefined {
  return pendingOf(meta)[id];
}

/** The declarations a missing-variables error names, as the request lists them. */
export function neededVariables(spec: SubagentSpec, missing: readonly string[], declared: (name: string) => { description: string; type: 'secret' | 'text' } | undefined): NeededVariable[] {
  return missing.map((name) => ({ name, description: declared(name)?.description ?? '', type: declared(name)?.type ?? 'secret' }));
}

/**
 * Records the request; with an elicitation-capable caller, asks for the
 * values at once. Returns the tool result the parent's model reads.
 */
export async function requestVariables(parent: Run, side: Side, spec: SubagentSpec, request: Omit<SpawnRequest, 'spec' | 'values'>, needed: NeededVariable[]): Promise<ToolResult> {
  const pending: PendingRequest = {
    id: randomUUID(),
    subagent: spec.agent.name,
    name: request.name,
    description: request.description,
    args: request.args,
    ...(request.message !== undefined ? { message: request.message } : {}),
    ...(request.attachments?.length ? { attachments: request.attachments } : {}),
    blocking: request.blocking,
    ...(request.immediate ? { immediate: true } : {}),
    needed,
  };
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => ({ ...meta, [PENDING_META]: { ...pendingOf(meta), [pending.id]: pending } }));
  if (parent.elicit) {
    const values = await parent
      .elicit({
        message: `The subagent "${request.name}" (${spec.agent.name}) needs these values before it can start.`,
        fields: needed.map((v) => ({ name: v.name, description: v.description, secret: v.type === 'secret', required: true })),
      })
      .catch(() => undefined);
    if (values) return fulfil(parent, side, pending.id, values);
  }
  const endpoint = `/threads/${parent.thread.id}/variables/${pending.id}`;
  return {
    status: 'error',
    error: JSON.stringify({
      error: 'subagent_env_required',
      request_id: pending.id,
      subagent: spec.agent.name,
      name: request.name,
      variables: needed,
      endpoint,
      message: `"${request.name}" cannot start until these variables have values. Ask the user to provide them (HTTP: POST a JSON object of values to ${endpoint}); it starts as soon as they do, and its result arrives as a message.`,
    }),
  };
}

/**
 * Stores the values and starts the deferred instance. Values must cover
 * every needed variable and name nothing else.
 */
export async function fulfil(parent: Run, side: Side, id: string, values: Record<string, unknown>, options: { detached?: boolean } = {}): Promise<ToolResult> {
  const pending = pendingRequest(parent.thread.meta, id);
  if (!pending) throw new AgentportError('INVALID_ARGUMENTS', `no pending subagent request ${id} on thread ${parent.thread.id}`);
  const names = new Set(pending.needed.map((v) => v.name));
  const unknown = Object.keys(values).filter((name) => !names.has(name));
  const missing = [...names].filter((name) => typeof values[name] !== 'string' || values[name] === '');
  if (unknown.length || missing.length) {
    throw new AgentportError('INVALID_ARGUMENTS', [missing.length ? `values needed for: ${missing.join(', ')}` : '', unknown.length ? `not asked for: ${unknown.join(', ')}` : ''].filter(Boolean).join('; '), {
      ...(missing.length ? { missing } : {}),
      ...(unknown.length ? { unknown } : {}),
    });
  }
  const spec = specFor(side, pending.subagent);
  if (!spec) throw new AgentportError('UNKNOWN_TOOL', `the subagent ${pending.subagent} is not available to ${side.prompt.name} any more`);
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => {
    const rest = { ...pendingOf(meta) };
    delete rest[id];
    return { ...meta, [PENDING_META]: rest };
  });
  // Started from outside a turn (HTTP), the instance always runs on its own.
  const blocking = pending.blocking && !options.detached;
  const { child, record } = await spawn(parent, side, {
    spec,
    name: pending.name,
    description: pending.description,
    args: pending.args,
    ...(pending.message !== undefined ? { message: pending.message } : {}),
    ...(pending.attachments ? { attachments: pending.attachments } : {}),
    values: values as Record<string, string>,
    blocking,
    ...(pending.immediate ? { immediate: true } : {}),
  });
  if (pending.message === undefined) return { status: 'success', result: `"${record.name}" (reference ${record.reference}) is ready for messages.` };
  return runInstance(parent, child, record, blocking);
}

export function specFor(side: Side, agent: string): SubagentSpec | undefined {
  for (const tool of side.toolset) {
    if (tool.kind === 'subagent' && tool.spec.agent.name === agent) return tool.spec;
    if (tool.kind === 'lifecycle') {
      const spec = tool.subagents.find((s) => s.agent.name === agent);
      if (spec) return spec;
    }
  }
  return undefined;
}
