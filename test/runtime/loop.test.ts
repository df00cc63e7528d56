/**
 * The step loop through the real path: MCP client -> HTTP -> runtime -> the
 * openai package -> the scripted model server, which records each request.
 */
import { describe, expect, it } from 'vitest';
import { startInProcess, textOf } from '../support/inProcess.js';
import { RUNTIME_AGENTS, useRuntimeHarness } from './harness.js';

const h = useRuntimeHarness({ API_TOKEN: 'tok-123456' });
// eslint-disable-next-line @typescript-eslint/unbound-method -- the harness's members are closures
const { model, sent, call } = h;
/** What the record_call fixture tool saw (it runs in a module instance of its own). */
const calls: Array<{ label: string; step: number; side: string; aborted: boolean; thread: string }> = ((
  globalThis as { __recordedCalls?: never[] }
).__recordedCalls ??= []);

describe('the step loop', () => {
  it('[TL-5] runs a two-step tool run and stores each result before the next step', async () => {
    model.reply({ toolCalls: [{ id: 'c1', name: 'add_numbers', arguments: { a: 2, b: 3 } }] }, { text: 'The sum is 5.' });
    const result = await call('calculator', { message: 'What is 2 + 3?' });
    expect(textOf(result)).toBe('The sum is 5.');
    const [first, second] = sent();
    expect(first!.tools!.map((t) => t.function.name)).toContain('add_numbers');
    expect(first!.messages).toEqual([
      { role: 'system', content: 'You calculate.' },
      { role: 'user', content: 'What is 2 + 3?' },
    ]);
    expect(second!.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add_numbers', arguments: '{"a":2,"b":3}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '5' },
    ]);
    const structured = result.structuredContent as { thread_id: string; steps: number };
    expect(structured.steps).toBe(2);
    const stored = await h.agentport.runtime.store.listMessages(structured.thread_id);
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(stored[2]).toMatchObject({ toolCallId: 'c1', toolName: 'add_numbers', toolStatus: 'success', content: '5' });
  });

  it('[TL-5] executes three tool calls from one response in the order returned', async () => {
    calls.length = 0;
    model.reply(
      {
        toolCalls: [
          { id: 'a', name: 'record_call', arguments: { label: 'first' } },
          { id: 'b', name: 'record_call', arguments: { label: 'second' } },
          { id: 'c', name: 'record_call', arguments: { label: 'third' } },
        ],
      },
      { text: 'done' },
    );
    await call('calculator', { message: 'record three' });
    expect(calls.map((c) => c.label)).toEqual(['first', 'second', 'third']);
    const toolMessages = sent()[1]!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['a', 'b', 'c']);
  });

  it('[TL-9] gives tools the step count, the current side and a live abort signal', async () => {
    calls.length = 0;
    model.reply(
      { toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ name: 'record_call', arguments: { label: 'x' } }] },
      { text: 'ok' },
    );
    await call('calculator', { message: 'go' });
    expect(calls).toEqual([expect.objectContaining({ label: 'x', step: 2, side: 'a', aborted: false })]);
  });

  it('[TL-3] reports invalid arguments to the model without calling execute, and the run continues', async () => {
    calls.length = 0;
    model.reply(
      { toolCalls: [{ id: 'bad', name: 'record_call', arguments: { label: 42 } }] },
      { toolCalls: [{ id: 'bad2', name: 'add_numbers', arguments: '{"a": 1,' }] },
      { text: 'I fixed nothing.' },
    );
    const result = await call('calculator', { message: 'go' });
    expect(textOf(result)).toBe('I fixed nothing.');
    expect(calls).toEqual([]);
    const [, second, third] = sent();
    const firstError = second!.messages.find((m) => m.role === 'tool')!;
    expect(firstError.content).toMatch(/^Error: Invalid arguments for record_call: label: Invalid input: expected string, received number/);
    expect(third!.messages.filter((m) => m.role === 'tool')[1]!.content).toMatch(/arguments are not valid JSON/);
  });

  it('[TL-4] turns a thrown exception and a malformed return into error results; the run continues', async () => {
    model.reply(
      {
        toolCalls: [
          { id: 't1', name: 'explode', arguments: {} },
          { id: 't2', name: 'malformed', arguments: {} },
        ],
      },
      { text: 'Both tools failed.' },
    );
    const result = await call('calculator', { message: 'go' });
    expect(result.isError).toBeFalsy();
    const tools = sent()[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools[0]!.content).toBe('Error: the database is on fire');
    expect(tools[1]!.content).toMatch(/^Error: the tool returned a result whose status is undefined/);
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    const stored = await h.agentport.runtime.store.listMessages(threadId);
    const exploded = stored.find((m) => m.toolCallId === 't1')!;
    expect(exploded.toolStatus).toBe('error');
    // The stack is kept for debugging but not sent to the model.
    expect(String(exploded.meta?.stack)).toContain('the database is on fire');
  });

  it('answers a call of a tool the prompt does not have with an error result', async () => {
    model.reply({ toolCalls: [{ id: 'u', name: 'rm_rf', arguments: {} }] }, { text: 'sorry' });
    await call('calculator', { message: 'go' });
    expect(sent()[1]!.messages.find((m) => m.role === 'tool')!.content).toMatch(
      /^Error: There is no tool named "rm_rf". Available tools: add_numbers, /,
    );
  });

  it('[AG-2] stops at the step limit with a clear error that says what was done', async () => {
    const limited = await startInProcess({
      agentsDir: RUNTIME_AGENTS,
      env: { OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k' },
      runtime: { maxSteps: 3 },
    });
    try {
      const c = await limited.connect();
      for (let i = 0; i < 3; i++) model.reply({ toolCalls: [{ name: 'add_numbers', arguments: { a: i, b: 1 } }] });
      const result = await c.callTool({ name: 'forgetful', arguments: { message: 'loop forever' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        'forgetful took 3 steps in one turn without finishing it\nWhat was done: add_numbers (success), add_numbers (success), add_numbers (success)',
      );
      expect((result.structuredContent as { error: unknown }).error).toEqual({
        code: 'STEP_LIMIT',
        message: 'forgetful took 3 steps in one turn without finishing it',
        data: { side: 'a', maxSteps: 3 },
      });
    } finally {
      await limited.close();
    }
  });
});

describe('tool choice, parallel calls and reasoning', () => {
  it('[PR-7] asks again when toolChoice is required and the model answers without a tool', async () => {
    model.reply({ text: 'I refuse.' }, { toolCalls: [{ name: 'add_numbers', arguments: { a: 1, b: 2 } }] }, { text: '3' });
    const result = await call('must_use_tool', { message: '1+2' });
    expect(textOf(result)).toBe('3');
    const [first, retry, last] = sent();
    expect(first!.tool_choice).toBe('required');
    expect(retry!.tool_choice).toBe('required');
    expect(retry!.messages.at(-1)).toEqual({ role: 'user', content: 'Answer by calling one of the available tools.' });
    // Once a tool was called the model may answer.
    expect(last!.tool_choice).toBe('auto');
  });

  it('[PR-7] fails clearly when the model never calls a tool', async () => {
    model.reply({ text: 'no' }, { text: 'no' }, { text: 'no' });
    const result = await call('must_use_tool', { message: '1+2' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('the model answered without calling a tool 3 times although toolChoice is "required"');
  });

  it('[PR-8] sends no tool definitions at all when toolChoice is none', async () => {
    model.reply({ text: 'plain' });
    await call('no_tools', { message: 'hi' });
    const [request] = sent();
    expect(request).not.toHaveProperty('tools');
    expect(request).not.toHaveProperty('tool_choice');
    expect(request).not.toHaveProperty('parallel_tool_calls');
  });

  it('[PR-11] [PR-2] passes parallelToolCalls to the model (false by default, toolChoice auto by default) and still runs calls in order', async () => {
    model.reply({ text: 'a' });
    await call('forgetful', { message: 'x' });
    model.reply(
      {
        toolCalls: [
          { id: '1', name: 'add_numbers', arguments: { a: 1, b: 1 } },
          { id: '2', name: 'add_numbers', arguments: { a: 2, b: 2 } },
        ],
      },
      { text: 'b' },
    );
    await call('parallel', { message: 'y' });
    const [defaultRequest, parallelRequest, after] = sent();
    // [PR-2] defaults: toolChoice auto, parallelToolCalls false.
    expect(defaultRequest!.tool_choice).toBe('auto');
    expect(defaultRequest!.parallel_tool_calls).toBe(false);
    expect(parallelRequest!.parallel_tool_calls).toBe(true);
    expect(after!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['2', '4']);
  });

  it('[PR-12] passes effort and max tokens, keeps excluded reasoning out of the result and included reasoning in history', async () => {
    model.reply({ text: 'answer one', reasoning: 'secret chain of thought' });
    const first = await call('thinker', { message: 'think' });
    expect(sent()[0]!.reasoning).toEqual({ effort: 'high', max_tokens: 2048 });
    expect(first.structuredContent).not.toHaveProperty('reasoning');
    expect(JSON.stringify(first)).not.toContain('secret chain of thought');
    const threadId = (first.structuredContent as { thread_id: string }).thread_id;
    model.reply({ text: 'answer two' });
    await call('thinker', { message: 'again', thread_id: threadId });
    expect(sent()[1]!.messages[2]).toEqual({ role: 'assistant', content: 'answer one', reasoning: 'secret chain of thought' });

    model.reply({ text: 'visible', reasoning: 'shown reasoning' });
    const open = await call('thinker_open', { message: 'think' });
    expect(sent()[2]!.reasoning_effort).toBe('low');
    expect((open.structuredContent as { reasoning?: string }).reasoning).toBe('shown reasoning');
  });
});

describe('chat history', () => {
  it('[PR-10] includes earlier turns only with includeChat, and earlier tool calls only with includePastTools', async () => {
    // Turn 1 with a tool call, on three prompts.
    const threads: Record<string, string> = {};
    for (const name of ['calculator', 'calculator_past_tools', 'forgetful']) {
      model.reply({ toolCalls: [{ id: `p-${name}`, name: 'add_numbers', arguments: { a: 1, b: 2 } }] }, { text: 'It is 3.' });
      const first = await call(name, { message: 'What is 1 + 2?' });
      threads[name] = (first.structuredContent as { thread_id: string }).thread_id;
    }
    const firstTurns = sent().length;
    for (const name of ['calculator', 'calculator_past_tools', 'forgetful']) {
      model.reply({ text: 'ok' });
      await call(name, { message: 'And again?', thread_id: threads[name] });
    }
    const [chatOnly, withTools, none] = sent()
      .slice(firstTurns)
      .map((r) => r.messages.slice(1));
    expect(chatOnly).toEqual([
      { role: 'user', content: 'What is 1 + 2?' },
      { role: 'assistant', content: 'It is 3.' },
      { role: 'user', content: 'And again?' },
    ]);
    expect(withTools).toEqual([
      { role: 'user', content: 'What is 1 + 2?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'p-calculator_past_tools', type: 'function', function: { name: 'add_numbers', arguments: '{"a":1,"b":2}' } }],
      },
      { role: 'tool', tool_call_id: 'p-calculator_past_tools', content: '3' },
      { role: 'assistant', content: 'It is 3.' },
      { role: 'user', content: 'And again?' },
    ]);
    expect(none).toEqual([{ role: 'user', content: 'And again?' }]);
  });

  it('[MC-7] returns the thread id and refuses a thread of another tool or an unknown one', async () => {
    model.reply({ text: 'one' });
    const first = await call('calculator', { message: 'hi' });
    const threadId = (first.structuredContent as { thread_id: string }).thread_id;
    expect(first._meta).toMatchObject({ 'agentport/thread_id': threadId });
    const other = await call('forgetful', { message: 'hi', thread_id: threadId });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toBe(`thread_id "${threadId}" belongs to "calculator", not "forgetful"`);
    const unknown = await call('calculator', { message: 'hi', thread_id: 'no-such-thread' });
    expect(textOf(unknown)).toMatch(/thread_id "no-such-thread" does not exist/);
  });
});

describe('attachments', () => {
  it('[TL-6] stores new attachments under /attachments/ unchanged and links them to the tool message', async () => {
    model.reply({ toolCalls: [{ id: 'img', name: 'make_chart', arguments: { name: 'chart.png' } }] }, { text: 'Here is the chart.' });
    const result = await call('calculator', { message: 'draw' });
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    const files = await h.agentport.runtime.store.listFiles(threadId, '/attachments');
    expect(files.map((f) => f.path)).toEqual(['/attachments/chart.png']);
    const stored = await h.agentport.runtime.store.readFile(threadId, '/attachments/chart.png');
    expect(Buffer.from(stored!.data).toString('base64')).toBe(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    );
    const messages = await h.agentport.runtime.store.listMessages(threadId);
    expect(messages.find((m) => m.toolCallId === 'img')!.attachments).toEqual([
      expect.objectContaining({ path: '/attachments/chart.png', mimeType: 'image/png', width: 1, height: 1 }),
    ]);
    // The image reaches the model right after the tool results.
    const followUp = sent()[1]!.messages.at(-1)!;
    expect(followUp.role).toBe('user');
    expect(JSON.stringify(followUp.content)).toContain('data:image/png;base64,iVBOR');
  });

  it('[TL-6] passes an AttachmentRef to an existing thread file through to the tool message', async () => {
    model.reply(
      { toolCalls: [{ id: 'mk', name: 'make_chart', arguments: { name: 'kept.png' } }] },
      { toolCalls: [{ id: 'ref', name: 'attach_file', arguments: { path: '/attachments/kept.png' } }] },
      { text: 'attached' },
    );
    const result = await call('calculator', { message: 'make then attach' });
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    const messages = await h.agentport.runtime.store.listMessages(threadId);
    expect(messages.find((m) => m.toolCallId === 'ref')).toMatchObject({
      toolStatus: 'success',
      attachments: [expect.objectContaining({ path: '/attachments/kept.png', mimeType: 'image/png' })],
    });
    // Not stored again: still one file.
    expect((await h.agentport.runtime.store.listFiles(threadId)).map((f) => f.path)).toEqual(['/attachments/kept.png']);
  });

  it('[TL-7] refuses attachment paths that escape the thread files', async () => {
    model.reply(
      {
        toolCalls: [
          { id: 'e1', name: 'write_escape', arguments: { name: '../../outside.txt' } },
          { id: 'e2', name: 'attach_file', arguments: { path: '/attachments/../../../etc/passwd' } },
        ],
      },
      { text: 'refused' },
    );
    const result = await call('calculator', { message: 'escape' });
    const tools = sent()[1]!.messages.filter((m) => m.role === 'tool');
    expect(tools[0]!.content).toBe(
      'Error: attachment 1 refused: name must be a file name (not empty, ".", ".." or a path), got "../../outside.txt"',
    );
    expect(tools[1]!.content).toMatch(/^Error: attachment .* refused: /);
    const threadId = (result.structuredContent as { thread_id: string }).thread_id;
    expect(await h.agentport.runtime.store.listFiles(threadId)).toEqual([]);
  });

  it('[PR-13] sends images of recent messages as images and older ones as a text note', async () => {
    model.reply({ toolCalls: [{ id: 'g1', name: 'make_chart', arguments: { name: 'old.png' } }] }, { text: 'first chart' });
    const first = await call('gallery', { message: 'chart one' });
    const threadId = (first.structuredContent as { thread_id: string }).thread_id;
    model.reply({ text: 'seen' });
    await call('gallery', { message: 'and now?', thread_id: threadId });
    const recent = sent()[1]!.messages;
    const lastRequest = sent()[2]!.messages;
    expect(JSON.stringify(recent)).toContain('image_url');
    // Two turns later the image is older than recentImageThreshold (2) and is described instead.
    expect(JSON.stringify(lastRequest)).not.toContain('image_url');
    expect(JSON.stringify(lastRequest)).toContain('[image omitted: old.png]');
  });
});

describe('deeply nested arguments', () => {
  it('[TL-2] accepts every allowed type nested seven levels deep, in the schema and in validation', async () => {
    const args = {
      l2: { l3: { l4: { l5: { l6: { l7: { leaf: 7 }, tags: ['a'] }, note: null }, extra: { k: 1 } }, kind: 'b' } },
      exact: 'yes',
      nothing: null,
    };
    model.reply({ toolCalls: [{ id: 'd', name: 'deep_args', arguments: args }] }, { text: 'deep' });
    await call('calculator', { message: 'deep' });
    const [first, second] = sent();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a deep JSON Schema read level by level
    const schema = first!.tools!.find((t) => t.function.name === 'deep_args')!.function.parameters as any;
    const leaf = schema.properties.l2.properties.l3.properties.l4.properties.l5.properties.l6.properties.l7.properties.leaf;
    expect(leaf).toEqual({ type: ['string', 'number'], description: 'The leaf value' });
    expect(schema.properties.exact).toEqual({ type: 'string', const: 'yes' });
    expect(schema.properties.nothing).toEqual({ type: 'null' });
    expect(JSON.parse(String(second!.messages.at(-1)!.content))).toEqual({ ...args, l2: { ...args.l2, flag: false } });
  });
});

describe('one thread, two calls at once', () => {
  it('[MC-7] runs turns of the same thread one after the other', async () => {
    model.reply({ text: 'first turn' });
    const first = await call('calculator', { message: 'one' });
    const threadId = (first.structuredContent as { thread_id: string }).thread_id;
    model.reply({ text: 'second turn', delayMs: 150 }, { text: 'third turn' });
    const before = sent().length;
    const secondCall = call('calculator', { message: 'two', thread_id: threadId });
    // Start the third call only once the second has reached the model, so the order is known.
    await waitFor(() => sent().length > before);
    const thirdCall = call('calculator', { message: 'three', thread_id: threadId });
    const [second, third] = await Promise.all([secondCall, thirdCall]);
    expect([textOf(second), textOf(third)]).toEqual(['second turn', 'third turn']);
    // The third call saw the whole second turn, not an interleaving.
    expect(sent().at(-1)!.messages.slice(1)).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'first turn' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 'second turn' },
      { role: 'user', content: 'three' },
    ]);
  });
});

describe('cancellation while a tool runs', () => {
  it("[TL-9] fires the tool's abort signal, stops the run and closes the call in the thread", async () => {
    const seen: boolean[] = ((globalThis as { __abortSeen?: boolean[] }).__abortSeen ??= []);
    seen.length = 0;
    model.reply({
      toolCalls: [
        { id: 'w', name: 'wait_for_abort', arguments: {} },
        { id: 'n', name: 'add_numbers', arguments: { a: 1, b: 1 } },
      ],
    });
    const controller = new AbortController();
    const threadsBefore = new Set((await h.agentport.runtime.store.listThreads()).map((t) => t.id));
    const pending = h.client.callTool({ name: 'calculator', arguments: { message: 'wait' } }, { signal: controller.signal });
    await waitFor(() => sent().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort('stop');
    await expect(pending).rejects.toThrow();
    await waitFor(async () => (await newThread(threadsBefore))?.status === 'cancelled');
    expect(seen).toEqual([true]);
    const messages = await h.agentport.runtime.store.listMessages((await newThread(threadsBefore))!.id);
    expect(messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content])).toEqual([
      ['w', 'Error: cancelled before this tool call finished'],
      ['n', 'Error: cancelled before this tool call finished'],
    ]);
  });
});

async function newThread(before: Set<string>) {
  return (await h.agentport.runtime.store.listThreads()).find((t) => !before.has(t.id));
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
