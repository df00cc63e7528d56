/**
 * How runs look as MCP tool results: the run's answer as text with the
 * thread id (structuredContent and _meta) so the caller can continue the
 * conversation, or its error, readable, with `isError`.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ErrorInfo } from '../errors.js';
import type { RunResult } from '../runtime/types.js';
import { attachmentLinks } from './resourceUris.js';

export const THREAD_META_KEY = 'agentport/thread_id';
/** Tokens and cost of the run (see src/models/usage.ts). */
const USAGE_META_KEY = 'agentport/usage';

/** A call that could not run at all: the error's message as text, its code in structuredContent. */
export function errorResult(error: ErrorInfo): CallToolResult {
  return { content: [{ type: 'text', text: error.message }], structuredContent: { error }, isError: true };
}

/** A run's result as a tool result. */
export function runResult(result: RunResult): CallToolResult {
  const text = result.error
    ? `${result.error.message}${result.toolCalls.length ? `\nWhat was done: ${result.toolCalls.map((c) => `${c.name} (${c.status})`).join(', ')}` : ''}`
    : result.text;
  return {
    // The files the run produced, as resources of the thread (resources.ts).
    content: [{ type: 'text', text }, ...attachmentLinks(result)],
    structuredContent: {
      thread_id: result.threadId,
      ...(result.error ? { error: result.error } : { response: result.data ?? result.text }),
      ...(result.reasoning ? { reasoning: result.reasoning } : {}),
      steps: result.steps,
      turns: result.turns,
      ...(result.attachments ? { attachments: result.attachments } : {}),
      tool_calls: result.toolCalls.map((call) => ({ name: call.name, status: call.status })),
    },
    _meta: { [THREAD_META_KEY]: result.threadId, ...(result.usage ? { [USAGE_META_KEY]: result.usage } : {}) },
    ...(result.error ? { isError: true } : {}),
  };
}
