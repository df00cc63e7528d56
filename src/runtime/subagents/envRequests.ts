/**
 * Subagents whose required `scoped` variables have no value cannot start:
 * scoped values are not inherited, someone must provide them. The runtime
 * records a request (in the parent thread's meta) and answers
 * `subagent_env_required` with its id and what is needed (names,
 * descriptions, secret or text; never values). The values then come through
 * `GET/POST /threads/{parent}/variables/{request}` on the HTTP transport, or
 * at once through an MCP elicitation form when the caller can be asked. The
 * values are stored with the child thread (secrets encrypted) and the child
 * starts.
 */
import { randomUUID } from 'node:crypto';
import type { ToolResult } from '../../definitions/types.js';
import { AgentportError, hasCode } from '../../errors.js';
import type { Run, Side } from '../run/types.js';
import type { SubagentSpec } from '../tools/toolset.js';
import { PENDING_META, pendingOf, type NeededVariable, type PendingRequest } from './registry.js';
import { startInstance, type SpawnRequest } from './spawn.js';

export function pendingRequest(meta: Record<string, unknown> | undefined, id: string): PendingRequest | undefined {
  return pendingOf(meta)[id];
}

/**
 * Records the request; with a caller that can be asked (elicitation), asks
 * for the values at once. Returns the tool result the parent's model reads.
 */
export async function requestVariables(
  parent: Run,
  side: Side,
  spec: SubagentSpec,
  request: Omit<SpawnRequest, 'spec' | 'values'>,
  needed: NeededVariable[],
): Promise<ToolResult> {
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
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => ({
    ...meta,
    [PENDING_META]: { ...pendingOf(meta), [pending.id]: pending },
  }));
  if (parent.elicit) {
    const values = await parent
      .elicit({
        message: `The subagent "${request.name}" (${spec.agent.name}) needs these values before it can start.`,
        fields: needed.map((v) => ({ name: v.name, description: v.description, secret: v.type === 'secret', required: true })),
      })
      .catch(() => undefined);
    // Values that do not fit leave the request open for the HTTP path.
    if (values) {
      try {
        return await fulfil(parent, side, pending.id, values);
      } catch (error) {
        if (!hasCode(error, 'INVALID_ARGUMENTS')) throw error;
      }
    }
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
 * every needed variable and name nothing else. The request is claimed once:
 * a second answer to it finds nothing; a start that fails puts it back.
 */
export async function fulfil(
  parent: Run,
  side: Side,
  id: string,
  values: Record<string, unknown>,
  options: { detached?: boolean } = {},
): Promise<ToolResult> {
  const known =
    pendingRequest(parent.thread.meta, id) ?? pendingRequest((await parent.services.store.getThread(parent.thread.id))?.meta, id);
  if (!known) throw new AgentportError('INVALID_ARGUMENTS', `no pending subagent request ${id} on thread ${parent.thread.id}`);
  const names = new Set(known.needed.map((v) => v.name));
  const unknown = Object.keys(values).filter((name) => !names.has(name));
  const missing = [...names].filter((name) => typeof values[name] !== 'string' || values[name] === '');
  if (unknown.length || missing.length) {
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      [missing.length ? `values needed for: ${missing.join(', ')}` : '', unknown.length ? `not asked for: ${unknown.join(', ')}` : '']
        .filter(Boolean)
        .join('; '),
      {
        ...(missing.length ? { missing } : {}),
        ...(unknown.length ? { unknown } : {}),
      },
    );
  }
  const spec = specFor(side, known.subagent);
  if (!spec) throw new AgentportError('UNKNOWN_TOOL', `the subagent ${known.subagent} is not available to ${side.prompt.name} any more`);

  let pending: PendingRequest | undefined;
  parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => {
    const rest = { ...pendingOf(meta) };
    pending = rest[id];
    delete rest[id];
    return { ...meta, [PENDING_META]: rest };
  });
  if (!pending)
    throw new AgentportError(
      'INVALID_ARGUMENTS',
      `no pending subagent request ${id} on thread ${parent.thread.id} (it was answered already)`,
    );
  const claimed = pending;
  // Started from outside a turn (HTTP), the instance always runs on its own.
  const blocking = claimed.blocking && !options.detached;
  try {
    const { result } = await startInstance(parent, side, {
      spec,
      name: claimed.name,
      description: claimed.description,
      args: claimed.args,
      ...(claimed.message !== undefined ? { message: claimed.message } : {}),
      ...(claimed.attachments ? { attachments: claimed.attachments } : {}),
      values: values as Record<string, string>,
      blocking,
      ...(claimed.immediate ? { immediate: true } : {}),
    });
    return result;
  } catch (error) {
    parent.thread = await parent.services.patchThreadMeta(parent.thread.id, (meta) => ({
      ...meta,
      [PENDING_META]: { ...pendingOf(meta), [id]: claimed },
    }));
    throw error;
  }
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
