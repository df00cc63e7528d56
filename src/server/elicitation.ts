/**
 * Asking the person behind a tool call for values, through MCP elicitation
 * (a form of text fields), when the client declared it can. It works with
 * clients of the 2025-11-25 era; for others (and when the person declines)
 * the runtime falls back to its HTTP endpoint for the values.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { Elicit } from '../runtime/run/types.js';

export function elicitation(server: Server, ctx: ServerContext): Elicit | undefined {
  if (!server.getClientCapabilities()?.elicitation) return undefined;
  return async ({ message, fields }) => {
    const result = await ctx.mcpReq.elicitInput({
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: Object.fromEntries(
          fields.map((field) => [
            field.name,
            { type: 'string', title: field.name, description: field.secret ? `Secret (stored encrypted): ${field.description}` : field.description },
          ]),
        ),
        required: fields.filter((field) => field.required).map((field) => field.name),
      },
    });
    if (result.action !== 'accept' || !result.content) return undefined;
    return Object.fromEntries(Object.entries(result.content).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  };
}
