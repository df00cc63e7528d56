/**
 * Prompts used as tools by other prompts, end to end.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness();
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('sub-prompts', () => {
  it('[SP-1] offers a sub-prompt to the model as a tool with its requiredSchema', async () => {
    h.model.reply({ text: 'no delegation needed' });
    await h.call('boss', { message: 'hi' });
    const tool = h.sent()[0]!.tools!.find((t) => t.function.name === 'researcher')!;
    expect(tool.function.description).toBe('Researches a question.');
    expect(tool.function.parameters).toEqual({
      type: 'object',
      properties: {
        question: { type: 'string', description: 'What to research' },
        image_path: { type: 'string', description: 'An image in the thread files' },
        depth: { type: 'integer', minimum: 1, maximum: 3, default: 1, description: 'How deep to dig' },
      },
      required: ['question'],
      additionalProperties: false,
    });
  });

  it('[SP-2] returns the outcome as one string with text, tool calls and errors by default', async () => {
    h.model.reply(
      { toolCalls: [{ id: 'r', name: 'researcher', arguments: { question: 'What is 2+2?' } }] },
      {
        toolCalls: [
          { id: 'n', name: 'add_numbers', arguments: { a: 2, b: 2 } },
          { id: 'x', name: 'explode', arguments: {} },
        ],
      },
      { text: 'It is 4.' },
      { text: 'The researcher says 4.' },
    );
    const result = await h.call('boss', { message: 'delegate' });
    expect(textOf(result)).toBe('The researcher says 4.');
    const toolResult = h.sent()[3]!.messages.find((m) => m.role === 'tool')!;
    expect(toolResult.content).toBe(
      [
        'It is 4.',
        '',
        'Tool calls:',
        '1. add_numbers({"a":2,"b":2})',
        '   -> success: 4',
        '2. explode({})',
        '   -> error: the database is on fire',
      ].join('\n'),
    );
  });

  it('[SP-2] leaves out the parts its flags switch off', async () => {
    h.model.reply(
      { toolCalls: [{ id: 'r', name: 'researcher', arguments: { question: 'q' } }] },
      { toolCalls: [{ id: 'n', name: 'add_numbers', arguments: { a: 1, b: 1 } }] },
      { text: 'Two.' },
      { text: 'ok' },
    );
    await h.call('terse_boss', { message: 'delegate' });
    const toolResult = h.sent()[3]!.messages.find((m) => m.role === 'tool')!;
    expect(toolResult.content).toBe('(prompt "researcher" ran; its output is not included)');
  });

  it('[SP-3] uses initUserMessageProperty as the initial message and copies initAttachmentsProperty files', async () => {
    // The boss first makes an image, then hands its path to the researcher.
    h.model.reply(
      { toolCalls: [{ id: 'c', name: 'make_chart', arguments: { name: 'photo.png' } }] },
      {
        toolCalls: [
          { id: 'r', name: 'researcher', arguments: { question: 'What is in the picture?', image_path: '/attachments/photo.png' } },
        ],
      },
      { text: 'A single pixel.' },
      { text: 'done' },
    );
    const result = await h.call('boss', { message: 'look' });
    const researcherRequest = h.sent()[2]!;
    expect(researcherRequest.messages[0]).toEqual({ role: 'system', content: 'You research.' });
    expect(researcherRequest.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is in the picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
      ],
    });
    // The child thread has its own copy of the file.
    const threads = await h.agentport.runtime.store.listThreads();
    const child = threads.find((t) => t.parentId === threadIdOf(result))!;
    expect((await h.agentport.runtime.store.listFiles(child.id)).map((f) => f.path)).toEqual(['/attachments/photo.png']);
  });

  it('[SP-3] validates sub-prompt arguments against its schema before running it', async () => {
    h.model.reply({ toolCalls: [{ id: 'r', name: 'researcher', arguments: { question: 'q', depth: 9 } }] }, { text: 'ok' });
    await h.call('boss', { message: 'x' });
    expect(h.sent()).toHaveLength(2);
    expect(h.sent()[1]!.messages.find((m) => m.role === 'tool')!.content).toMatch(
      /^Error: Invalid arguments for researcher: depth: Too big/,
    );
  });

  it('[SP-4] a sub-prompt without includeChat sees only its system prompt and initial message; with it, the caller chat', async () => {
    h.model.reply(
      {
        toolCalls: [
          { id: 'q', name: 'quiet_helper', arguments: { message: 'summarize' } },
          { id: 'c', name: 'chatty_helper', arguments: { message: 'summarize' } },
        ],
      },
      { text: 'quiet answer' },
      { text: 'chatty answer' },
      { text: 'both done' },
    );
    await h.call('chat_boss', { message: 'The customer is Ada.' });
    const [, quiet, chatty] = h.sent();
    expect(quiet!.messages).toEqual([
      { role: 'system', content: 'You help without context.' },
      { role: 'user', content: 'summarize' },
    ]);
    expect(chatty!.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You help with context.' },
      { role: 'user', content: 'The customer is Ada.' },
    ]);
    expect(chatty!.messages.at(-1)).toEqual({ role: 'user', content: 'summarize' });
  });

  it('[SP-5] nests sub-prompts three levels deep', async () => {
    h.model.reply(
      { toolCalls: [{ id: '1', name: 'level_two', arguments: { message: 'go two' } }] },
      { toolCalls: [{ id: '2', name: 'level_three', arguments: { message: 'go three' } }] },
      { toolCalls: [{ id: '3', name: 'add_numbers', arguments: { a: 40, b: 2 } }] },
      { text: '42 from three' },
      { text: '42 from two' },
      { text: '42 from one' },
    );
    const result = await h.call('level_one', { message: 'start' });
    expect(textOf(result)).toBe('42 from one');
    const systems = h.sent().map((r) => r.messages[0]!.content);
    expect(systems).toEqual(['Level one.', 'Level two.', 'Level three.', 'Level three.', 'Level two.', 'Level one.']);
    const threads = await h.agentport.runtime.store.listThreads();
    const top = threadIdOf(result);
    const two = threads.find((t) => t.parentId === top)!;
    const three = threads.find((t) => t.parentId === two.id)!;
    expect([two.prompt, three.prompt]).toEqual(['level_two', 'level_three']);
  });

  it('[SP-5] stops runaway recursion with a clear error', async () => {
    // Every level calls itself again; the runtime stops at the depth limit (8).
    for (let i = 0; i < 8; i++) h.model.reply({ toolCalls: [{ id: `o${i}`, name: 'ouroboros', arguments: { message: 'again' } }] });
    for (let i = 0; i < 8; i++) h.model.reply({ text: `unwound ${i}` });
    const result = await h.call('ouroboros', { message: 'start' });
    expect(textOf(result)).toBe('unwound 7');
    const deepest = h.sent()[8]!.messages.find((m) => m.role === 'tool')!;
    expect(deepest.content).toBe(
      'Error: sub-prompt nesting deeper than 8 levels (ouroboros -> ouroboros -> ouroboros -> ouroboros -> ouroboros -> ouroboros -> ouroboros -> ouroboros -> ouroboros): stopped as runaway recursion',
    );
  });
});

it('[SP-2] documents the result format: the doc example is what the formatter produces', () => {
  const doc = readFileSync(path.join(FIXTURES, '..', '..', 'docs', 'subprompt-results.md'), 'utf8');
  const example = /Example with every part[^\n]*\n\n```text\n([\s\S]*?)\n```/.exec(doc)?.[1];
  expect(example).toBeDefined();
  const golden = readFileSync(path.join(FIXTURES, 'subprompt-results', 'rich-text-calls-errors.txt'), 'utf8').replace(/\n$/, '');
  expect(example).toBe(golden);
});
