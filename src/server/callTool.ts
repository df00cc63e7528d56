/**
 * The one place where runtime outcomes become MCP results: an unknown tool is
 * a protocol error (-32602); everything else, bad arguments and failing
 * models included, is a tool result with `isError: true` the caller can read.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { errorMessage, isAgentportError } from '../errors.js';
import type { Runtime } from '../runtime/runPrompt.js';
import type { ExposedTool } from './toolCatalog.js';
import { log } from './log.js';

export async function callExposedTool(
  runtime: Runtime,
  tools: ReadonlyMap<string, ExposedTool>,
  name: string,
  args: Record<string, unknown> | undefined,
  ctx: ServerContext,
): Promise<CallToolResult> {
  if (!tools.has(name)) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let progress = 0;
  const onProgress = (message: string) => {
    if (progressToken === undefined) return;
    progress += 1;
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken, progress, message } })
      .catch((error: unknown) => log.warn(`progress notification failed: ${errorMessage(error)}`));
  };
  try {
    const result = await runtime.runPrompt({ target: name, args: args ?? {}, signal: ctx.mcpReq.signal, onProgress });
    return { content: [{ type: 'text', text: result.text }] };
  } catch (error) {
    if (!isAgentportError(error)) log.error(`tool ${name} failed: ${errorMessage(error)}`);
    return { content: [{ type: 'text', text: errorMessage(error) }], isError: true };
  }
}
