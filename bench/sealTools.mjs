// The Seal-Tools data set (shared/data/toolsearch/seal-tools) in MCP tools/list shape.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support.mjs';

export const DATA_DIR = process.env.AGENTPORT_TOOLSEARCH_DATA ?? path.resolve(ROOT, '..', 'shared', 'data', 'toolsearch', 'seal-tools');

/** Seal-Tools parameter types -> JSON Schema types. */
const JSON_TYPES = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array', dict: 'object' };

export function readJsonl(file) {
  return readFileSync(path.join(DATA_DIR, file), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** A Seal-Tools tool in MCP tools/list shape. */
export function toMcpTool(tool) {
  const properties = {};
  for (const [name, parameter] of Object.entries(tool.parameters ?? {})) {
    properties[name] = { type: JSON_TYPES[parameter.type] ?? 'string' };
    if (parameter.description) properties[name].description = parameter.description;
  }
  return {
    name: tool.api_name,
    description: tool.api_description,
    inputSchema: { type: 'object', properties, required: tool.required ?? [] },
  };
}

/** `count` tools: copies of `tools` namespaced srv1__, srv2__, ... as an MCP host with many servers would see them. */
export function namespaced(tools, count) {
  const out = [];
  for (let copy = 1; out.length < count; copy++) {
    for (const tool of tools) {
      if (out.length === count) break;
      out.push({ ...tool, name: `srv${copy}__${tool.name}` });
    }
  }
  return out;
}
