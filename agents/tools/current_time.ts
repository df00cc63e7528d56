import { defineTool } from 'agentport-mcp';

/** A tool without arguments has no `args`. */
export default defineTool({
  description: 'Get the current date and time in ISO 8601 format (UTC).',
  execute: async () => ({ status: 'success', result: new Date().toISOString() }),
});
