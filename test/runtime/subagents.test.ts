/**
 * Subagents end to end through the real MCP client and the scripted model:
 * the four invocation modes, immediate and optional subagents, maxInstances,
 * explicit parent communication, scoped variables and their request flow,
 * attachments across threads, progress and cancellation.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { textOf } from '../support/inProcess.js';
import { FIXTURES } from '../support/paths.js';
import { threadIdOf, useRuntimeHarness } from './harness.js';

export const SUBAGENT_AGENTS = path.join(FIXTURES, 'agents', 'subagents');
const h = useRuntimeHarness({}, {}, SUBAGENT_AGENTS);

const systemOf = (body: { messages: Array<{ content: unknown }> }) => String(body.messages[0]!.content);
const toolNames = (body: { tools?: Array<{ function: { name: string } }> }) => (body.tools ?? []).map((t) => t.function.name).sort();
const lastToolResult = (body: { messages: Array<{ role: string; content: unknown }> }) =>
  String(body.messages.filter((m) => m.role === 'tool').at(-1)?.content);

async function messagesOf(threadId: string) {
  return h.agentport.runtime.store.listMessages(threadId);
}

describe('the four invocation modes', () => {
  it('[SA-1] non-resumable blocking: the child session runs in its own thread and its sessionStop message is the tool result', async () => {
    h.model.reply(
      { toolCalls: [{ id: 'r', name: 'researcher', arguments: { topic: 'rain' } }] },
      { text: 'Draft about rain.' },
      { text: 'Fine.' },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Rain is water falling.' } }] },
      { text: 'Done: rain is water.' },
    );
    const progress: string[] = [];
    const result = await h.client.callTool(
      { name: 'lead_blocking', arguments: { message: 'Research rain' } },
      { onprogress: (p) => progress.push(p.message ?? '') },
    );
    expect(textOf(result)).toBe('Done: rain is water.');
    const sent = h.sent();
    expect(sent.map(systemOf)).toEqual(['Lead blocking.', 'Research writer.', 'Research checker.', 'Research writer.', 'Lead blocking.']);
    expect(sent[1]!.messages[1]).toEqual({ role: 'user', content: '{"topic":"rain"}' });
    expect(lastToolResult(sent[4]!)).toBe('Rain is water falling.');
    expect(progress).toContain('researcher#1: step 1, calling the model');
    expect(progress).toContain('researcher#1 (research_checker): step 1, calling the model');

    const parentId = threadIdOf(result);
    const children = (await h.agentport.runtime.store.listThreads()).filter((t) => t.parentId === parentId);
    expect(children.map((t) => t.prompt)).toEqual(['researcher']);
    expect((await messagesOf(children[0]!.id)).map((m) => `${m.side}:${m.role}`)).toEqual([
      'a:user',
      'a:assistant',
      'b:assistant',
      'a:assistant',
      'a:tool',
    ]);
  });

  it('[SA-1] a sessionFail of a blocking child is an error tool result with its message', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'nothing' } }] },
      { toolCalls: [{ name: 'give_up', arguments: { message: 'There is nothing to find.' } }] },
      { text: 'It gave up.' },
    );
    await h.call('lead_blocking', { message: 'Research nothing' });
    expect(lastToolResult(h.sent()[2]!)).toBe('Error: There is nothing to find.');
  });

  it('[SA-1] non-blocking: returns a reference at once; the result arrives later as a message and wakes the idle parent', async () => {
    h.model.replyToSystem(
      'Lead async.',
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'snow' } }] },
      { text: 'Waiting for the researcher.' },
      { text: 'Got it: snow is cold.' },
    );
    h.model.replyToSystem('Research writer.', { toolCalls: [{ name: 'deliver', arguments: { summary: 'Snow is frozen water.' } }] });
    const result = await h.call('lead_async', { message: 'Research snow' });
    expect(textOf(result)).toBe('Waiting for the researcher.');
    const parentId = threadIdOf(result);
    const started = lastToolResult(h.sent().find((b) => systemOf(b) === 'Lead async.' && b.messages.some((m) => m.role === 'tool'))!);
    expect(started).toMatch(
      /^Started "researcher#1" \(reference [0-9a-f-]+\)\. It works on its own: its result will arrive as a message in this conversation when it finishes\./,
    );

    await expect.poll(async () => (await messagesOf(parentId)).at(-1)?.content, { timeout: 5000 }).toBe('Got it: snow is cold.');
    const wake = h
      .sent()
      .filter((b) => systemOf(b) === 'Lead async.')
      .at(-1)!;
    const note = String(wake.messages.at(-1)!.content);
    expect(note).toMatch(
      /^Message from subagent "researcher#1" \(researcher, reference [0-9a-f-]+\):\nSnow is frozen water\.\n\nNo reply is expected\.$/,
    );
  });

  it('[SA-2] resumable blocking: subagent_create starts a named instance, subagent_message continues it in its thread', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'scout', arguments: { topic: 'hills' } } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Hills are high.' } }] },
      { text: 'First report in.' },
    );
    const first = await h.call('lead_resumable', { message: 'Scout the hills' });
    expect(textOf(first)).toBe('First report in.');
    expect(toolNames(h.sent()[0]!)).toEqual(['subagent_create', 'subagent_message']);
    expect(lastToolResult(h.sent()[2]!)).toBe('Hills are high.');

    h.model.reply(
      { toolCalls: [{ name: 'subagent_message', arguments: { to: 'scout', message: 'And the valleys?' } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Valleys are low.' } }] },
      { text: 'Second report in.' },
    );
    const second = await h.call('lead_resumable', { message: 'More', thread_id: threadIdOf(first) });
    expect(textOf(second)).toBe('Second report in.');
    // The instance sees its earlier work (its writer has includeChat), then the parent's new message.
    expect(
      h
        .sent()[4]!
        .messages.slice(1)
        .map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : ''}`),
    ).toEqual(['user:{"topic":"hills"}', 'user:And the valleys?']);
    expect(lastToolResult(h.sent()[5]!)).toBe('Valleys are low.');
  });

  it('[SA-2] resumable non-blocking: subagent_create returns at once and the result comes back as a message', async () => {
    h.model.replyToSystem(
      'Lead resumable async.',
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'far', arguments: { topic: 'sea' } } }] },
      { text: 'Started.' },
      { text: 'The sea report arrived.' },
    );
    h.model.replyToSystem('Research writer.', { toolCalls: [{ name: 'deliver', arguments: { summary: 'The sea is salty.' } }] });
    const result = await h.call('lead_resumable_async', { message: 'Go' });
    expect(textOf(result)).toBe('Started.');
    await expect
      .poll(async () => (await messagesOf(threadIdOf(result))).at(-1)?.content, { timeout: 5000 })
      .toBe('The sea report arrived.');
    const note = String(
      h
        .sent()
        .filter((b) => systemOf(b) === 'Lead resumable async.')
        .at(-1)!
        .messages.at(-1)!.content,
    );
    expect(note).toContain('The sea is salty.');
    expect(note).toContain('No reply is expected. You can give it more work with subagent_message to "far".');
  });

  it('[SA-2] offers subagent_create only below maxInstances and refuses a name twice', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'one', arguments: { topic: 'a' } } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'A.' } }] },
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'one', arguments: { topic: 'b' } } }] },
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'two', arguments: { topic: 'b' } } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'B.' } }] },
      { text: 'Two instances.' },
    );
    await h.call('lead_resumable', { message: 'Start two' });
    const parentRequests = h.sent().filter((b) => systemOf(b) === 'Lead resumable.');
    expect(lastToolResult(parentRequests[2]!)).toBe(
      'Error: Invalid arguments for subagent_create: an instance named "one" already exists; message it with subagent_message, or choose another name',
    );
    expect(toolNames(parentRequests[2]!)).toEqual(['subagent_create', 'subagent_message']);
    expect(toolNames(parentRequests[3]!)).toEqual(['subagent_message']);
  });

  it('[SA-2] receives_messages side_b: the parent message reaches side B as the other side speaking, and side B starts', async () => {
    h.model.reply(
      {
        toolCalls: [
          { name: 'subagent_create', arguments: { name: 'critic', arguments: { message: 'Check this claim: the sky is green.' } } },
        ],
      },
      { text: 'That claim is false.' },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'The sky is blue.' } }] },
      { text: 'Checked.' },
    );
    await h.call('lead_side_b', { message: 'Check a claim' });
    const [, b, a] = h.sent();
    expect(b!.messages).toEqual([
      { role: 'system', content: 'Research checker.' },
      { role: 'user', content: 'Check this claim: the sky is green.' },
    ]);
    expect(a!.messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Check this claim: the sky is green.' },
      { role: 'user', content: 'That claim is false.' },
    ]);
  });
});

describe('instances that are busy or waiting', () => {
  it('[SA-2] a message to a busy instance waits for its current session; both answers reach the parent', async () => {
    h.model.replyToSystem(
      'Lead resumable async.',
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'slow', arguments: { topic: 'first' } } }] },
      { toolCalls: [{ name: 'subagent_message', arguments: { to: 'slow', message: 'second question' } }] },
      { text: 'asked twice' },
      { text: 'first arrived' },
      { text: 'second arrived' },
    );
    h.model.replyToSystem(
      'Research writer.',
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Answer one.' } }], delayMs: 300 },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Answer two.' } }], delayMs: 300 },
    );
    const result = await h.call('lead_resumable_async', { message: 'Go' });
    expect(textOf(result)).toBe('asked twice');
    const parentId = threadIdOf(result);
    const busy = h.sent().filter((b) => systemOf(b) === 'Lead resumable async.')[2]!;
    expect(lastToolResult(busy)).toBe(
      '"slow" is busy; it gets the message when its current session ends, and its answer will arrive as a message.',
    );
    await expect
      .poll(async () => (await messagesOf(parentId)).filter((m) => m.role === 'assistant').at(-1)?.content, { timeout: 5000 })
      .toBe('second arrived');
    const notes = (await messagesOf(parentId))
      .filter((m) => String(m.content).startsWith('Message from subagent'))
      .map((m) => String(m.content));
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain('Answer one.');
    expect(notes[1]).toContain('Answer two.');
  });

  it('[SA-5] a name waiting for its variables is taken, and an immediate start is requested once per thread', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'twin', arguments: { message: 'a' } } }] },
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'twin', arguments: { message: 'b' } } }] },
      { text: 'one request' },
    );
    const result = await h.call('lead_scoped', { message: 'twins' });
    expect(lastToolResult(h.sent()[2]!)).toBe(
      'Error: Invalid arguments for subagent_create: an instance named "twin" already exists; message it with subagent_message, or choose another name',
    );
    const parent = await h.agentport.runtime.store.getThread(threadIdOf(result));
    expect(Object.values(parent!.meta!.pendingSubagents as object)).toHaveLength(1);

    h.model.reply({ text: 'first turn' }, { text: 'second turn' });
    const first = await h.call('lead_immediate_scoped', { message: 'go' });
    await h.call('lead_immediate_scoped', { message: 'again', thread_id: threadIdOf(first) });
    const immediate = await h.agentport.runtime.store.getThread(threadIdOf(first));
    expect(Object.values(immediate!.meta!.pendingSubagents as object)).toHaveLength(1);
    expect((await messagesOf(threadIdOf(first))).filter((m) => String(m.content).includes('could not start'))).toHaveLength(1);
  });
});

describe('the registry of children', () => {
  it('[SA-2] lists instances in state.children, opens them with getChildThread, and fires after_subagent_created on the parent', async () => {
    const created: unknown[] = ((globalThis as { __childrenCreated?: unknown[] }).__childrenCreated ??= []);
    created.length = 0;
    h.model.reply(
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'alpha', arguments: { topic: 't' } } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'ok' } }] },
      { toolCalls: [{ id: 'list', name: 'list_children', arguments: {} }] },
      { text: 'listed' },
    );
    const result = await h.call('lead_inspect', { message: 'go' });
    expect(JSON.parse(lastToolResult(h.sent()[3]!))).toEqual({
      children: [{ name: 'alpha', agent: 'researcher', status: 'idle', resumable: true, blocking: true, parentCommunication: 'implicit' }],
      firstMessages: 3,
      firstAgent: 'researcher',
      parent: null,
    });
    expect(created).toEqual([{ parent: threadIdOf(result), name: 'alpha', agent: 'researcher', resumable: true, blocking: true }]);
  });
});

describe('parent communication', () => {
  it('[SA-2] explicit: only notifyParent reaches the parent, saying whether a reply is expected', async () => {
    h.model.replyToSystem(
      'Lead explicit.',
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'pinger', arguments: { message: 'work' } } }] },
      { text: 'Started the pinger.' },
      { text: 'Noted the question.' },
    );
    h.model.replyToSystem(
      'Notifier.',
      { toolCalls: [{ name: 'ping_parent', arguments: { text: 'Which format do you want?', reply: true } }] },
      { toolCalls: [{ name: 'done', arguments: { message: 'finished quietly' } }] },
    );
    const result = await h.call('lead_explicit', { message: 'Go' });
    expect(textOf(result)).toBe('Started the pinger.');
    const parentId = threadIdOf(result);
    await expect.poll(async () => (await messagesOf(parentId)).at(-1)?.content, { timeout: 5000 }).toBe('Noted the question.');
    const notes = (await messagesOf(parentId)).filter((m) => m.role === 'user' && String(m.content).startsWith('Message from subagent'));
    expect(notes).toHaveLength(1);
    expect(String(notes[0]!.content)).toContain(
      'Which format do you want?\n\nIt expects a reply: answer with subagent_message to "pinger".',
    );
    // The session's end ("finished quietly") did not reach the parent.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await messagesOf(parentId)).some((m) => String(m.content).includes('finished quietly'))).toBe(false);
  });
});

describe('immediate and optional subagents', () => {
  it('[SA-3] an immediate subagent runs before the parent’s first model step', async () => {
    h.model.reply({ toolCalls: [{ name: 'deliver', arguments: { summary: 'Background ready.' } }] }, { text: 'Using the background.' });
    const result = await h.call('lead_immediate', { message: 'Tell me about tides' });
    expect(textOf(result)).toBe('Using the background.');
    const [child, parent] = h.sent();
    expect(systemOf(child!)).toBe('Research writer.');
    expect(child!.messages[1]).toEqual({ role: 'user', content: 'Tell me about tides' });
    expect(parent!.messages.slice(1)).toEqual([
      { role: 'user', content: 'Tell me about tides' },
      { role: 'user', content: 'The subagent researcher ran first. Its result:\nBackground ready.' },
    ]);
    // Once per thread: continuing it does not start another.
    h.model.reply({ text: 'Again.' });
    await h.call('lead_immediate', { message: 'More', thread_id: threadIdOf(result) });
    expect(h.sent().map(systemOf)).toEqual(['Research writer.', 'Lead immediate.', 'Lead immediate.']);
  });

  it('[SA-3] [TL-11] immediate { nameEnv, descriptionEnv, scopedEnv }: names the instance and gives it the scoped values, never shown to a model', async () => {
    h.model.replyToSystem(
      'Lead immediate scoped.',
      { toolCalls: [{ name: 'subagent_message', arguments: { to: 'vault', message: 'use your key' } }] },
      { text: 'The vault used its key.' },
    );
    h.model.replyToSystem(
      'Keyed.',
      { toolCalls: [{ name: 'use_key', arguments: {} }] },
      { toolCalls: [{ name: 'done', arguments: { message: 'done with the key' } }] },
    );
    const result = await h.call(
      'lead_immediate_scoped',
      { message: 'go' },
      { 'agentport/variables': { KEYED_NAME: 'vault', KEYED_ROLE: 'Keeps the key', SERVICE_KEY: 'sk-immediate-scope-31' } },
    );
    expect(textOf(result)).toBe('The vault used its key.');
    const child = (await h.agentport.runtime.store.listThreads()).find((t) => t.parentId === threadIdOf(result))!;
    expect((await messagesOf(child.id)).find((m) => m.role === 'tool')?.content).toBe('key ends with 31');
    const parent = await h.agentport.runtime.store.getThread(threadIdOf(result));
    expect((parent!.meta!.children as Array<{ name: string; description: string; immediate: boolean }>)[0]).toMatchObject({
      name: 'vault',
      description: 'Keeps the key',
      immediate: true,
    });
    expect(JSON.stringify(h.model.requests.map((r) => r.body))).not.toContain('sk-immediate-scope-31');
  });

  it.each([
    ['true', true],
    ['1', true],
    ['YES', true],
    ['no', false],
    [undefined, false],
  ])('[SA-4] optional: the flag %s %s the subagent', async (flag, offered) => {
    h.model.reply({ text: 'ok' });
    await h.call('lead_optional', { message: 'hi' }, flag === undefined ? undefined : { 'agentport/variables': { RESEARCH_ON: flag } });
    expect(toolNames(h.sent()[0]!)).toEqual(offered ? ['researcher', 'write_note'] : ['write_note']);
  });
});

describe('scoped variables', () => {
  it('[SA-5] [TL-11] subagent_env_required -> GET -> POST boots the child; the value stays in its subtree', async () => {
    h.model.replyToSystem(
      'Lead scoped.',
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'k1', arguments: { message: 'use the key' } } }] },
      { text: 'Waiting for the key.' },
      { text: 'k1 reported.' },
      { toolCalls: [{ name: 'subagent_create', arguments: { name: 'k2', arguments: { message: 'use the key' } } }] },
      { text: 'k2 needs its own key.' },
    );
    h.model.replyToSystem(
      'Keyed.',
      { toolCalls: [{ name: 'use_key', arguments: {} }] },
      { toolCalls: [{ name: 'key_helper', arguments: { message: 'use it too' } }] },
      { toolCalls: [{ name: 'done', arguments: { message: 'used it' } }] },
    );
    h.model.replyToSystem('Key helper.', { toolCalls: [{ name: 'use_key', arguments: {} }] }, { text: 'helper used it' });
    const result = await h.call('lead_scoped', { message: 'Start k1' });
    const parentId = threadIdOf(result);
    const required = JSON.parse(lastToolResult(h.sent()[1]!).replace(/^Error: /, '')) as {
      error: string;
      request_id: string;
      variables: unknown;
      endpoint: string;
    };
    expect(required).toMatchObject({
      error: 'subagent_env_required',
      subagent: 'keyed',
      name: 'k1',
      variables: [{ name: 'SERVICE_KEY', description: 'The key of the service this instance uses', type: 'secret' }],
      endpoint: `/threads/${parentId}/variables/${required.request_id}`,
    });
    const base = h.agentport.url.replace(/\/mcp$/, '');
    const get = await fetch(`${base}${required.endpoint}`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({
      request_id: required.request_id,
      thread_id: parentId,
      subagent: 'keyed',
      name: 'k1',
      variables: required.variables,
    });
    const bad = await fetch(`${base}${required.endpoint}`, { method: 'POST', body: JSON.stringify({ OTHER: 'x' }) });
    expect(bad.status).toBe(400);
    const post = await fetch(`${base}${required.endpoint}`, { method: 'POST', body: JSON.stringify({ SERVICE_KEY: 'sk-subtree-one-77' }) });
    expect(post.status).toBe(200);
    const { reference } = (await post.json()) as { reference: string };

    await expect.poll(async () => (await messagesOf(parentId)).at(-1)?.content, { timeout: 5000 }).toBe('k1 reported.');
    const used = (await messagesOf(reference)).filter((m) => m.role === 'tool');
    expect(used[0]?.content).toBe('key ends with 77');
    // The value flows down the instance's own subtree: its sub-prompt, which declares it scoped too, gets it.
    const helper = (await h.agentport.runtime.store.listThreads()).find((t) => t.parentId === reference)!;
    expect((await messagesOf(helper.id)).find((m) => m.role === 'tool')?.content).toBe('key ends with 77');
    const stored = await h.agentport.runtime.store.getVariables(reference);
    expect(stored).toEqual([{ name: 'SERVICE_KEY', value: 'sk-subtree-one-77', secret: true, scoped: true }]);
    expect(JSON.stringify(h.model.requests.map((r) => r.body))).not.toContain('sk-subtree-one-77');
    expect((await fetch(`${base}${required.endpoint}`)).status).toBe(404);
    expect((await fetch(`${base}/threads/%E0%A4%A/variables/x`)).status).toBe(400);

    // A sibling instance does not see k1's value: it needs its own.
    await h.call('lead_scoped', { message: 'Start k2', thread_id: parentId });
    const second = JSON.parse(
      lastToolResult(
        h
          .sent()
          .filter((b) => systemOf(b) === 'Lead scoped.')
          .at(-1)!,
      ).replace(/^Error: /, ''),
    ) as { error: string; name: string };
    expect(second).toMatchObject({ error: 'subagent_env_required', name: 'k2' });
  });
});

describe('attachments across threads', () => {
  it('[SA-6] copies init attachments into the child and the child’s result files into the parent, rewriting paths; refuses ../', async () => {
    h.model.replyToSystem(
      'Lead blocking.',
      { toolCalls: [{ name: 'write_note', arguments: { path: '/notes/brief.md', text: 'the brief' } }] },
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'files', files: ['/notes/brief.md'] } }] },
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'escape', files: ['../../etc/passwd'] } }] },
      { text: 'Files done.' },
    );
    h.model.replyToSystem(
      'Research writer.',
      { toolCalls: [{ name: 'read_file', arguments: { path: '/attachments/brief.md' } }] },
      { toolCalls: [{ name: 'make_report', arguments: { text: 'the report' } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Report attached.', files: ['/out/report.md'] } }] },
    );
    const result = await h.call('lead_blocking', { message: 'Files' });
    expect(textOf(result)).toBe('Files done.');
    const writer = h.sent().filter((b) => systemOf(b) === 'Research writer.');
    expect(writer[0]!.messages[1]!.content).toBe('{"topic":"files","files":["/attachments/brief.md"]}');
    expect(lastToolResult(writer[1]!)).toBe('the brief');
    const lead = h.sent().filter((b) => systemOf(b) === 'Lead blocking.');
    expect(lastToolResult(lead[2]!)).toBe('Report attached.\n\nFiles: /attachments/report.md');
    expect(lastToolResult(lead[3]!)).toBe(
      'Error: cannot hand files to researcher#2: Invalid thread file path "../../etc/passwd": ".." segments are not allowed',
    );
    const parentFile = await h.agentport.runtime.store.readFile(threadIdOf(result), '/attachments/report.md');
    expect(Buffer.from(parentFile!.data).toString('utf8')).toBe('the report');
  });
});

describe('over MCP', () => {
  it('[SA-1] cancelling the parent’s call cancels a blocking child', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'forever' } }] },
      { toolCalls: [{ name: 'slow_tool', arguments: {} }] },
    );
    const controller = new AbortController();
    const pending = h.client.callTool({ name: 'lead_blocking', arguments: { message: 'Wait' } }, { signal: controller.signal });
    await expect.poll(() => h.sent().length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await expect(pending).rejects.toThrow();
    const threads = await h.agentport.runtime.store.listThreads();
    const child = threads.filter((t) => t.prompt === 'researcher').at(-1)!;
    await expect.poll(async () => (await h.agentport.runtime.store.getThread(child.id))?.status).toBe('cancelled');
  });

  it('[SA-1] a child thread id continues the child directly as thread_id', async () => {
    h.model.reply(
      { toolCalls: [{ name: 'researcher', arguments: { topic: 'moss' } }] },
      { toolCalls: [{ name: 'deliver', arguments: { summary: 'Moss is green.' } }] },
      { text: 'ok' },
    );
    const parent = await h.call('lead_blocking', { message: 'Moss' });
    const child = (await h.agentport.runtime.store.listThreads()).find((t) => t.parentId === threadIdOf(parent))!;
    h.model.reply({ toolCalls: [{ name: 'deliver', arguments: { summary: 'Moss grows slowly.' } }] });
    const direct = await h.call('researcher', { topic: 'moss growth', thread_id: child.id });
    expect(textOf(direct)).toBe('Moss grows slowly.');
    expect(threadIdOf(direct)).toBe(child.id);
  });
});
