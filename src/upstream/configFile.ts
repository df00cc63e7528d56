/** The agents folder's file of upstream MCP servers (config.ts reads it): its name alone, for code that only looks for it. */
export const UPSTREAM_CONFIG_FILE = 'mcp.json';
