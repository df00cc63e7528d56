/**
 * Asking the person behind a tool call for values, through MCP elicitation
 * (a form of text fields), when the client declared it can. It works with
 * clients of the 2025-11-25 era (a request to the client) and, inside an MCP
 * task, with every client that opted in to tasks (an input request answered
 * through `tasks/update`, see tasks.ts); otherwise, and when the person
 * declines, the runtime falls back to its HTTP endpoint for the values.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { Elicit } from '../runtime/run/types.js';

type ElicitRequest = Parameters<Elicit>[0];

export function elicitation(server: Server, ctx: ServerContext): Elicit | undefined {
  if (!server.getClientCapabilities()?.elicitation) return undefined;
  return async (request) => formValues(await ctx.mcpReq.elicitInput(formRequest(request)));
}

/** The `elicitation/create` params asking for these fields. */
export function formRequest({ message, fields }: ElicitRequest) {
  return {
    mode: 'form' as const,
    message,
    requestedSchema: {
      type: 'object' as const,
      properties: Object.fromEntries(
        fields.map((field) => [
          field.name,
          {
            type: 'string' as const,
            title: field.name,
            description: field.secret ? `Secret (stored encrypted): ${field.description}` : field.description,
          },
        ]),
      ),
      required: fields.filter((field) => field.required).map((field) => field.name),
    },
  };
}

/**
 * The values of an accepted form. Every field asked for is text; a client
 * that sends a number or a boolean (a checkbox) gets it kept as its text.
 */
export function formValues(result: unknown): Record<string, string> | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const { action, content } = result as { action?: unknown; content?: unknown };
  if (action !== 'accept' || typeof content !== 'object' || content === null) return undefined;
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(content)) {
    if (typeof value === 'string') values[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') values[key] = String(value);
  }
  return values;
}
