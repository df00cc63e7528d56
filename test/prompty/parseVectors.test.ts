/**
 * Prompty's own parse behaviour (the cases of its runtime's parse vectors, spec/vectors/parse, and
 * the `developer` role its parser recognizes), checked through real `.prompty` files: each body is
 * written to a file, loaded and rendered, and the messages compared by role and text.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPromptyFile } from '../../src/prompty/load.js';
import { renderPrompty } from '../../src/prompty/render.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentport-vectors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The messages of a body as `[role, text]` pairs (developer sections as `developer`). */
async function parse(name: string, body: string, template = 'mustache'): Promise<Array<[string, string]>> {
  const file = path.join(dir, `${name}.prompty`);
  await writeFile(file, `---\ndescription: vector ${name}\nmodel: main\ntemplate: ${template}\n---\n${body}`);
  const p = await loadPromptyFile(file, { agentsDir: dir, env: {} });
  const { messages } = await renderPrompty(p, {});
  return messages.map((m) => {
    if (m.kind === 'thread') return ['thread', ''];
    const text = m.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('');
    return [m.declaredRole ?? m.role, text];
  });
}

const VECTORS: Array<{ name: string; body: string; expected: Array<[string, string]> }> = [
  { name: 'single_system', body: 'system:\nYou are helpful.', expected: [['system', 'You are helpful.']] },
  {
    name: 'system_user',
    body: 'system:\nYou are helpful.\n\nuser:\nHello',
    expected: [
      ['system', 'You are helpful.'],
      ['user', 'Hello'],
    ],
  },
  {
    name: 'multiline_content',
    body: 'system:\nLine one.\nLine two.\nLine three.\n\nuser:\nQuestion',
    expected: [
      ['system', 'Line one.\nLine two.\nLine three.'],
      ['user', 'Question'],
    ],
  },
  {
    name: 'multiple_user_turns',
    body: 'system:\nHelper\n\nuser:\nFirst question\n\nassistant:\nFirst answer\n\nuser:\nSecond question',
    expected: [
      ['system', 'Helper'],
      ['user', 'First question'],
      ['assistant', 'First answer'],
      ['user', 'Second question'],
    ],
  },
  {
    name: 'no_role_marker_defaults_to_system',
    body: 'Just a plain message with no role marker',
    expected: [['system', 'Just a plain message with no role marker']],
  },
  {
    name: 'content_trimmed',
    body: 'system:\n  \n  You are helpful.  \n  \n\nuser:\n  Hello  ',
    expected: [
      ['system', '  \n  You are helpful.  \n  '],
      ['user', '  Hello  '],
    ],
  },
  {
    name: 'empty_content',
    body: 'system:\n\nuser:\nHello',
    expected: [
      ['system', ''],
      ['user', 'Hello'],
    ],
  },
  {
    name: 'role_marker_at_line_start_only',
    body: 'system:\nThe user: said hello\n\nuser:\nHi',
    expected: [
      ['system', 'The user: said hello'],
      ['user', 'Hi'],
    ],
  },
  {
    name: 'markdown_in_content',
    body: 'system:\n# Title\n\nSome **bold** text\n\n- item 1\n- item 2\n\nuser:\nHello',
    expected: [
      ['system', '# Title\n\nSome **bold** text\n\n- item 1\n- item 2'],
      ['user', 'Hello'],
    ],
  },
  {
    name: 'consecutive_newlines_between_roles',
    body: 'system:\nHelper\n\n\n\nuser:\nHi',
    expected: [
      ['system', 'Helper'],
      ['user', 'Hi'],
    ],
  },
  {
    name: 'assistant_with_code_block',
    body: "assistant:\nHere is code:\n```python\nprint('hello')\n```\n\nuser:\nThanks",
    expected: [
      ['assistant', "Here is code:\n```python\nprint('hello')\n```"],
      ['user', 'Thanks'],
    ],
  },
  {
    name: 'role_marker_colon_in_content',
    body: 'system:\nHere is a tip: always be kind.\n\nuser:\nTime is 3:30pm',
    expected: [
      ['system', 'Here is a tip: always be kind.'],
      ['user', 'Time is 3:30pm'],
    ],
  },
  {
    name: 'developer_role',
    body: 'developer:\nFollow the house style.\n\nuser:\nHi',
    expected: [
      ['developer', 'Follow the house style.'],
      ['user', 'Hi'],
    ],
  },
  {
    name: 'developer_case_and_spacing',
    body: '  DEVELOPER :\n\tIndented rule.\t\n\nassistant:\nOk',
    expected: [
      ['developer', '\tIndented rule.\t'],
      ['assistant', 'Ok'],
    ],
  },
  {
    name: 'markdown_heading_roles',
    body: '# system:\nYou are helpful.\n\n# user:\n# Heading in the text\nHello',
    expected: [
      ['system', 'You are helpful.'],
      ['user', '# Heading in the text\nHello'],
    ],
  },
];

describe("Prompty's parse vectors", () => {
  for (const vector of VECTORS) {
    it(`[PY-11] ${vector.name}`, async () => {
      expect(await parse(vector.name, vector.body)).toEqual(vector.expected);
    });
  }

  it('[PY-11] [PY-9] the same vectors hold for jinja2 bodies', async () => {
    for (const vector of VECTORS) {
      expect(await parse(`${vector.name}_jinja2`, vector.body, 'jinja2')).toEqual(vector.expected);
    }
  });

  it('[PY-11] a developer section is sent as a system message', async () => {
    const file = path.join(dir, 'dev_role.prompty');
    await writeFile(file, '---\ndescription: d\nmodel: main\n---\ndeveloper[tone="dry"]:\nBe brief.\n');
    const { messages } = await renderPrompty(await loadPromptyFile(file, { agentsDir: dir, env: {} }), {});
    expect(messages).toEqual([
      {
        kind: 'message',
        role: 'system',
        declaredRole: 'developer',
        attributes: { tone: 'dry' },
        content: [{ type: 'text', text: 'Be brief.' }],
      },
    ]);
  });
});
