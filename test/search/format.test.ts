/**
 * The text tool search returns to a model, produced from real searches.
 */
import { describe, expect, it } from 'vitest';
import { searchTools } from '../../src/search/engine.js';
import { formatFunctionLine, formatSearchOutcome } from '../../src/search/format.js';
import { ToolSearchIndex } from '../../src/search/toolIndex.js';
import { TOOLS, tool } from './fixtures.js';

const index = new ToolSearchIndex(TOOLS);

/** Splits a reply into its <functions> block (parsed) and the lines after it. */
function parseReply(text: string): { functions: Array<Record<string, unknown>>; after: string[] } {
  const lines = text.split('\n');
  expect(lines[0]).toBe('<functions>');
  const end = lines.indexOf('</functions>');
  expect(end).toBeGreaterThan(0);
  const functions = lines.slice(1, end).map((line) => {
    const match = /^<function>(.*)<\/function>$/.exec(line);
    expect(match, line).not.toBeNull();
    return JSON.parse(match?.[1] ?? 'null') as Record<string, unknown>;
  });
  return { functions, after: lines.slice(end + 1) };
}

describe('search result text', () => {
  it('[TS-4] select: gives a <functions> block, one <function> JSON line per tool, then a plain line', () => {
    const { text } = searchTools(index, 'select:slack_send_message,github.create-issue');
    const { functions, after } = parseReply(text);
    expect(functions.map((f) => f.name)).toEqual(['slack_send_message', 'github.create-issue']);
    for (const f of functions) expect(Object.keys(f)).toEqual(['description', 'name', 'parameters']);
    expect(after).toEqual(['Loaded 2 tools: slack_send_message, github.create-issue. They can be called now.']);
    expect(text.trimEnd().endsWith('</functions>')).toBe(false);
  });

  it('[TS-4] parameters are the input schema without its top-level $schema, everything else kept', () => {
    const { text } = searchTools(index, 'select:slack_send_message,calendar-create-event');
    const { functions } = parseReply(text);
    const { $schema: _schema, ...expected } = tool('slack_send_message').inputSchema ?? {};
    expect(functions[0]).toEqual({
      description: 'Send a message to a Slack channel',
      name: 'slack_send_message',
      parameters: expected,
    });
    expect(functions[0]?.parameters).not.toHaveProperty('$schema');
    // Nested schemas are passed through untouched.
    expect(functions[1]?.parameters).toEqual(tool('calendar-create-event').inputSchema);
  });

  it('[TS-4] keyword results use the same format, best first, and keep unicode text intact', () => {
    const { functions, after } = parseReply(searchTools(index, 'traduction française').text);
    expect(functions[0]).toMatchObject({ name: 'translate_text', description: 'Übersetzt Text — traduction française, 日本語 翻訳' });
    expect(after[0]).toMatch(/^Loaded \d+ tools?: translate_text(, |\.)/);
  });

  it('[TS-4] a tool without description or schema gets "" and an empty object schema', () => {
    const { functions, after } = parseReply(formatSearchOutcome(index.search('select:digit_sum')));
    expect(functions).toEqual([
      { description: 'Sum the digits of a number', name: 'digit_sum', parameters: { type: 'object', properties: {} } },
    ]);
    expect(after).toEqual(['Loaded 1 tool: digit_sum. It can be called now.']);
    expect(formatFunctionLine({ name: 'bare' })).toBe(
      '<function>{"description":"","name":"bare","parameters":{"type":"object","properties":{}}}</function>',
    );
  });

  it('[TS-4] a description containing </function> cannot end the element early, and still parses back', () => {
    const line = formatFunctionLine({ name: 'tricky', description: 'Ends with </function> and </functions>\nnewline' });
    expect(line.indexOf('</function>')).toBe(line.length - '</function>'.length);
    expect(line.split('\n')).toHaveLength(1);
    const json = JSON.parse(line.slice('<function>'.length, -'</function>'.length)) as { description: string };
    expect(json.description).toBe('Ends with </function> and </functions>\nnewline');
  });

  it('[TS-4] unknown select: names are named on a line after the block', () => {
    const { text } = searchTools(index, 'select:send_email,nope,gone');
    const { functions, after } = parseReply(text);
    expect(functions.map((f) => f.name)).toEqual(['send_email']);
    expect(after).toEqual(['Loaded 1 tool: send_email. It can be called now.', 'No tool is named: nope, gone.']);
  });

  it('[TS-4] no match is a plain message suggesting broader keywords or select:, with no block', () => {
    const keywords = searchTools(index, 'xyzzy plugh').text;
    expect(keywords).not.toContain('<function');
    expect(keywords).toBe(
      'No tools matched "xyzzy plugh". Try fewer or broader keywords, or load tools by exact name with select:name1,name2.',
    );

    const select = searchTools(index, 'select:nope,gone').text;
    expect(select).not.toContain('<function');
    expect(select).toMatch(/^No tool is named: nope, gone\./);

    const required = searchTools(index, '+zzz send').text;
    expect(required).not.toContain('<function');
    expect(required).toContain('No tool name has words starting with "zzz".');
  });

  it('[TS-4] an empty query gets a plain explanation of the query forms', () => {
    const { outcome, text } = searchTools(index, '   ');
    expect(outcome.mode).toBe('invalid');
    expect(text).not.toContain('<function');
    expect(text).toMatch(/^The query is empty\./);
    expect(text).toContain('select:name1,name2');
    expect(text).toContain('+word');
  });
});
