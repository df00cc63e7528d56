/**
 * The text a model receives from tool search: the found tools' definitions in
 * a `<functions>` block (the encoding tool lists use in prompts), then a plain
 * sentence. The sentence matters: a reply that ends on the block makes some
 * models stop instead of calling the tool.
 */
import type { SearchOutcome, SearchableTool } from './types.js';

/**
 * One `<function>` line: JSON with keys in the order description, name,
 * parameters. `parameters` is the input schema without its top-level
 * `$schema` (strict providers reject it; the model does not need it).
 */
export function formatFunctionLine(tool: SearchableTool): string {
  const json = JSON.stringify({
    description: tool.description ?? '',
    name: tool.name,
    parameters: parametersOf(tool),
  });
  // `\/` is a valid JSON escape: a description containing "</function>" can
  // then never close the element early for a reader that scans for it.
  return `<function>${json.replaceAll('</', '<\\/')}</function>`;
}

/** A `<functions>` block with one line per tool. */
function formatFunctionsBlock(tools: readonly SearchableTool[]): string {
  return ['<functions>', ...tools.map(formatFunctionLine), '</functions>'].join('\n');
}

/** The full reply to a search, ready to return as a tool result's text. */
export function formatSearchOutcome(outcome: SearchOutcome): string {
  if (outcome.mode === 'invalid') return outcome.error ?? 'The query could not be read.';
  const lines: string[] = [];
  if (outcome.tools.length > 0) {
    lines.push(formatFunctionsBlock(outcome.tools));
    const names = outcome.tools.map((tool) => tool.name).join(', ');
    const count = outcome.tools.length === 1 ? '1 tool' : `${outcome.tools.length} tools`;
    lines.push(`Loaded ${count}: ${names}. ${outcome.tools.length === 1 ? 'It' : 'They'} can be called now.`);
  } else {
    lines.push(noMatchMessage(outcome));
  }
  if (outcome.unknown.length > 0 && outcome.tools.length > 0) {
    lines.push(`No tool is named: ${outcome.unknown.join(', ')}.`);
  }
  return lines.join('\n');
}

function noMatchMessage(outcome: SearchOutcome): string {
  if (outcome.mode === 'select') {
    return (
      `No tool is named: ${outcome.unknown.join(', ')}. ` + 'Use names exactly as listed, or search with keywords to find the right ones.'
    );
  }
  // With +terms, every tool whose name matches is listed, so no match means no name does.
  const required =
    outcome.required.length > 0
      ? ` No tool name has words starting with ${outcome.required.map((term) => `"${term}"`).join(' and ')}.`
      : '';
  return (
    `No tools matched "${outcome.query.trim()}".${required} ` +
    'Try fewer or broader keywords, or load tools by exact name with select:name1,name2.'
  );
}

function parametersOf(tool: SearchableTool): Record<string, unknown> {
  const schema = tool.inputSchema;
  if (schema === undefined) return { type: 'object', properties: {} };
  if (!('$schema' in schema)) return schema;
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}
