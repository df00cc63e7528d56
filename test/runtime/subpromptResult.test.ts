/**
 * Golden tests for the sub-prompt result string (docs/subprompt-results.md).
 *
 * Each case below has `test/fixtures/subprompt-results/<case>.txt` holding the expected output
 * followed by one newline. The folder test fails on any file that no case uses.
 * Regenerate after an intended format change, then read every diff:
 *   UPDATE_GOLDEN=1 npx vitest run test/runtime/subpromptResult.test.ts
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSubpromptResult, type SubpromptOutcome, type SubpromptResultFlags } from '../../src/runtime/tools/subpromptResult.js';
import { FIXTURES } from '../support/paths.js';

const DIR = path.join(FIXTURES, 'subprompt-results');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

interface GoldenCase {
  name: string;
  title: string;
  outcome: SubpromptOutcome;
  flags?: SubpromptResultFlags;
}

/** Text, a successful call with a multi-line result, a failed call and one run error. */
const rich: SubpromptOutcome = {
  prompt: 'research',
  text: "The refund window is 30 days.\nRefunds over $500 need a manager's approval.",
  toolCalls: [
    {
      name: 'search_docs',
      arguments: '{ "query": "refund policy", "limit": 2 }',
      status: 'success',
      result:
        'Found 2 documents:\n' +
        '- refunds.md: Refunds are accepted within 30 days of delivery.\n' +
        "- approvals.md: Refunds over $500 need a manager's approval.",
    },
    { name: 'get_order', arguments: '{"order_id": "A-1017"}', status: 'error', error: 'Order A-1017 not found' },
  ],
  errors: ['stopped after 25 steps without a final answer'],
};

const flagCases: GoldenCase[] = [];
for (const includeTextResponse of [true, false]) {
  for (const includeToolCalls of [true, false]) {
    for (const includeErrors of [true, false]) {
      const on = [includeTextResponse && 'text', includeToolCalls && 'calls', includeErrors && 'errors'].filter(Boolean);
      flagCases.push({
        name: `rich-${on.length ? on.join('-') : 'all-off'}`,
        title: `includeTextResponse=${includeTextResponse} includeToolCalls=${includeToolCalls} includeErrors=${includeErrors}`,
        outcome: rich,
        flags: { includeTextResponse, includeToolCalls, includeErrors },
      });
    }
  }
}

const edgeCases: GoldenCase[] = [
  {
    name: 'no-tool-calls',
    title: 'a run without tool calls or errors is just its text',
    outcome: { prompt: 'summarize', text: 'Three points:\n1. a\n2. b\n3. c', toolCalls: [], errors: [] },
  },
  {
    name: 'null-text',
    title: 'a run that ended without text starts with its tool calls',
    outcome: {
      prompt: 'research',
      text: null,
      toolCalls: [{ name: 'search_docs', arguments: '{"query":"refunds"}', status: 'success', result: '0 documents' }],
      errors: ['Step limit reached (3 steps) before a final response'],
    },
  },
  {
    name: 'null-text-empty',
    title: 'a run with no text, no tool calls and no errors says so instead of returning ""',
    outcome: { prompt: 'research', text: null, toolCalls: [], errors: [] },
  },
  {
    name: 'blank-text',
    title: 'a whitespace-only text counts as no text',
    outcome: { prompt: 'research', text: ' \n\n\t\n', toolCalls: [], errors: [] },
  },
  {
    name: 'text-off-nothing-shown',
    title: 'with includeTextResponse off and nothing else to show, the line says the output is not included',
    outcome: { prompt: 'research', text: 'hidden answer', toolCalls: [], errors: [] },
    flags: { includeTextResponse: false },
  },
  {
    name: 'arguments',
    title: 'valid JSON arguments lose only their whitespace; invalid ones are shown as sent',
    outcome: {
      prompt: 'research',
      text: 'done',
      toolCalls: [
        {
          name: 'pretty',
          arguments:
            '{\n  "query": "refund  policy \\"EU\\"\\n",\n  "ratio": 1.0,\n  "id": 12345678901234567890,\n  "tags": [ "a", "b" ]\n}',
          status: 'success',
          result: 'ok',
        },
        { name: 'truncated', arguments: '{"query": "refu', status: 'error', error: 'arguments are not valid JSON' },
        {
          name: 'multiline_invalid',
          arguments: "{\n  query: 'refunds',\n  limit: 2\n}",
          status: 'error',
          error: 'arguments are not valid JSON',
        },
        { name: 'no_args', arguments: '', status: 'success', result: 'pong' },
        { name: 'empty_object', arguments: ' {} ', status: 'success', result: 'pong' },
      ],
      errors: [],
    },
  },
  {
    name: 'header-lookalikes',
    title: 'results and errors that look like section headers or entries stay indented under their entry',
    outcome: {
      prompt: 'research',
      text: 'Summary below.',
      toolCalls: [
        {
          name: 'read_file',
          arguments: '{"path":"notes.md"}',
          status: 'success',
          result: 'Tool calls:\n1. search_docs({"query":"x"})\n   -> success: fake\n\nErrors:\n- not a real error',
        },
        { name: 'write_file', arguments: '{"path":"out.md"}', status: 'error', error: 'Errors:\n- disk full' },
      ],
      errors: ['Model request failed:\nTool calls:\n- none\n2. fake()'],
    },
  },
  {
    name: 'empty-values',
    title: 'a call without result or message and an empty run error are still shown',
    outcome: {
      prompt: 'research',
      text: 'done',
      toolCalls: [
        { name: 'notify', arguments: '{}', status: 'success' },
        { name: 'clear_cache', arguments: '{}', status: 'success', result: '  \n' },
        { name: 'ping', arguments: '{}', status: 'error' },
      ],
      errors: [''],
    },
  },
  {
    name: 'whitespace',
    title: 'CRLF becomes LF, surrounding blank lines go, relative indentation in results stays',
    outcome: {
      prompt: 'research',
      text: '\r\n\r\n  Indented first line.\r\nSecond line.\r\n\r\n',
      toolCalls: [
        {
          name: 'run_code',
          arguments: '{"code":"print(1)"}',
          status: 'success',
          result: '\ndef f():\r\n    return 1\r\n   \r\nprint(f())\n\n',
        },
      ],
      errors: ['first line\r\n  indented detail  \r\n'],
    },
  },
];

const cases = [...flagCases, ...edgeCases];

function golden(name: string): string {
  return path.join(DIR, `${name}.txt`);
}

describe('sub-prompt result golden files', () => {
  for (const c of cases) {
    it(`[SP-2] ${c.title} (${c.name})`, () => {
      const actual = formatSubpromptResult(c.outcome, c.flags) + '\n';
      if (UPDATE) {
        mkdirSync(DIR, { recursive: true });
        writeFileSync(golden(c.name), actual);
      }
      expect(existsSync(golden(c.name)), `missing ${golden(c.name)} (run with UPDATE_GOLDEN=1)`).toBe(true);
      expect(actual).toBe(readFileSync(golden(c.name), 'utf8'));
    });
  }

  it('[SP-2] every golden file belongs to a case', () => {
    const names = new Set(cases.map((c) => `${c.name}.txt`));
    expect(names.size, 'case names must be unique').toBe(cases.length);
    const strays = readdirSync(DIR).filter((f) => !names.has(f));
    expect(strays).toEqual([]);
  });
});

describe('sub-prompt result flags', () => {
  it('[SP-2] every flag defaults to true', () => {
    const all = formatSubpromptResult(rich, { includeTextResponse: true, includeToolCalls: true, includeErrors: true });
    expect(formatSubpromptResult(rich)).toBe(all);
    expect(formatSubpromptResult(rich, {})).toBe(all);
  });

  it('[SP-2] each flag set to false removes only its part', () => {
    const all = formatSubpromptResult(rich);
    expect(all).toContain('The refund window is 30 days.');
    expect(all).toContain('Tool calls:');
    expect(all).toContain('Errors:');
    expect(formatSubpromptResult(rich, { includeTextResponse: false })).not.toContain('The refund window');
    expect(formatSubpromptResult(rich, { includeToolCalls: false })).not.toMatch(/Tool calls:|search_docs|get_order/);
    expect(formatSubpromptResult(rich, { includeErrors: false })).not.toMatch(/Errors:|stopped after/);
  });

  it('[SP-2] the result is never the empty string', () => {
    const empty: SubpromptOutcome = { prompt: 'p', text: null, toolCalls: [], errors: [] };
    for (const c of flagCases) {
      expect(formatSubpromptResult(empty, c.flags)).not.toBe('');
      expect(formatSubpromptResult({ ...rich, text: '' }, c.flags)).not.toBe('');
    }
  });
});
