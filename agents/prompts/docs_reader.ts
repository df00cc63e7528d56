import { definePrompt } from 'agentport-mcp';

/**
 * Uses the tools of an upstream MCP server: `docs` in agents/mcp.json, the
 * filesystem server on this repository's docs/ folder. Its tools are deferred
 * behind tool_search (the model sees `docs__read_text_file` and the others by
 * name and loads what it needs); `list_directory` is offered at once, and the
 * tools that change files are left out.
 */
export default definePrompt({
  name: 'docs_reader',
  title: 'Docs reader',
  toolDescription:
    'Answer a question about agentport from its own documentation (the docs/ folder), naming the file the answer comes from.',
  model: 'main',
  exposeAsTool: true,
  prompt:
    'You answer questions about agentport from its documentation, a folder of Markdown files. ' +
    'List the folder, find the tools you need with tool_search, read the files that look relevant, ' +
    'and answer briefly, naming the file each fact comes from. Say so when the documentation does not cover the question.',
  tools: [{ name: 'mcp:docs', alwaysLoad: ['list_directory'], exclude: ['write_file', 'edit_file', 'move_file', 'create_directory'] }],
});
