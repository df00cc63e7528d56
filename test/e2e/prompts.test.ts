/**
 * Exposed prompts and agents as MCP prompts (`prompts/list`, `prompts/get`)
 * and completion of their enum and literal arguments, through the real MCP
 * client over stdio and Streamable HTTP in both protocol eras; then the
 * official conformance suite's prompts and completion scenarios.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itPassesConformance } from '../support/conformanceScenario.js';
import { connectHttp, connectStdio, startHttpServer, type Era, type HttpServerProcess } from '../support/mcpClients.js';
import { FIXTURES } from '../support/paths.js';

const AGENTS = `${FIXTURES}/agents/mcp-surface`;
const SHOP_KEY = 'bo-key-7f3a9c1e55';
const ENV = { SHOP_API_KEY: SHOP_KEY, OPENAI_API_KEY: 'sk-test-0000' };

type TextMessage = { role: string; content: { type: string; text?: string } };
const texts = (messages: readonly TextMessage[]) =>
  messages.map((m) => [m.role, m.content.type === 'text' ? m.content.text : m.content.type]);

const cases: Array<['stdio' | 'http', Era]> = [
  ['stdio', 'legacy'],
  ['stdio', 'modern'],
  ['http', 'legacy'],
  ['http', 'modern'],
];

describe.each(cases)('MCP prompts over %s (%s era)', (transport, era) => {
  let client: Client;
  let http: HttpServerProcess | undefined;
  beforeAll(async () => {
    if (transport === 'stdio') ({ client } = await connectStdio(era, { agentsDir: AGENTS, env: ENV }));
    else {
      http = await startHttpServer({ agentsDir: AGENTS, env: ENV });
      client = await connectHttp(era, http.url);
    }
  }, 30_000);
  afterAll(async () => {
    await client?.close();
    await http?.stop();
  });

  it('[MC-8] declares prompts, completions and logging', () => {
    expect(client.getServerCapabilities()).toMatchObject({ prompts: {}, completions: {}, logging: {}, tools: {} });
  });

  it('[MC-8] lists every exposed prompt and agent with its arguments, and nothing else', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual([
      'failing_prompt',
      'greet_customer',
      'shop_faq',
      'test_prompt_with_arguments',
      'test_simple_prompt',
      'test_tool_with_logging',
      'welcome_desk',
    ]);
    const byName = new Map(prompts.map((p) => [p.name, p]));
    expect(byName.get('greet_customer')).toEqual({
      name: 'greet_customer',
      title: 'Greet a customer',
      description: 'Write a short greeting for a customer of the shop.',
      arguments: [
        { name: 'customer', description: 'The customer name', required: true },
        { name: 'tone', description: 'How the greeting sounds', required: true },
        { name: 'language', description: 'The language of the greeting', required: false },
        { name: 'vip', description: 'Whether the customer is a VIP (boolean)', required: false },
        { name: 'visits', description: 'How often the customer has visited (integer)', required: false },
      ],
    });
    // A .prompty prompt: its inputs; a default makes an input optional.
    expect(byName.get('shop_faq')).toMatchObject({
      description: "Answer a question about the shop's policies in the requested tone.",
      arguments: [
        { name: 'question', description: "The customer's question", required: true },
        { name: 'tone', description: 'How the answer should sound', required: false },
      ],
    });
    // An agent: its side A prompt's arguments (welcome_writer itself is not exposed).
    expect(byName.get('welcome_desk')).toEqual({
      name: 'welcome_desk',
      title: 'Welcome desk',
      description: 'Write a welcome note for a new member.',
      arguments: [
        { name: 'member', description: 'Who joined', required: true },
        { name: 'occasion', description: 'Why the note is written', required: true },
      ],
    });
    // A prompt without requiredSchema takes the message; thread_id is never a prompt argument.
    expect(byName.get('failing_prompt')?.arguments).toEqual([{ name: 'message', description: 'The message to send.', required: true }]);
  });

  it('[MC-8] gets a TypeScript prompt: its system text as an instruction, then the arguments as a call sends them', async () => {
    const result = await client.getPrompt({
      name: 'greet_customer',
      arguments: { customer: 'Ada', tone: 'formal', vip: 'true', visits: '3' },
    });
    expect(result.description).toBe('Write a short greeting for a customer of the shop.');
    expect(texts(result.messages as TextMessage[])).toEqual([
      ['user', 'You write short greetings for customers of an online shop. Look the customer up first.'],
      ['user', expect.any(String)],
    ]);
    // Typed from the text arguments, with the schema's default filled in, exactly as a tools/call would start.
    expect(JSON.parse((result.messages[1]!.content as { text: string }).text)).toEqual({
      customer: 'Ada',
      tone: 'formal',
      language: 'en',
      vip: true,
      visits: 3,
    });
    // A blank optional field, as hosts send it, is no value: the default applies.
    const blank = await client.getPrompt({
      name: 'greet_customer',
      arguments: { customer: 'Ada', tone: 'formal', language: '', visits: '' },
    });
    expect(JSON.parse((blank.messages[1]!.content as { text: string }).text)).toEqual({ customer: 'Ada', tone: 'formal', language: 'en' });
  });

  it('[MC-8] gets a Prompty prompt rendered by its template, with secrets redacted', async () => {
    const result = await client.getPrompt({ name: 'shop_faq', arguments: { question: 'Can I return shoes?', tone: 'formal' } });
    const messages = texts(result.messages);
    expect(messages.map(([role]) => role)).toEqual(['user', 'user', 'assistant', 'user']);
    expect(messages[0]![1]).toContain("You answer questions about the shop's policies in a formal tone.");
    expect(messages.slice(1)).toEqual([
      ['user', 'Do you ship on weekends?'],
      ['assistant', 'We ship on working days only.'],
      ['user', 'Can I return shoes?'],
    ]);
    // ${env:SHOP_API_KEY} was resolved when the folder loaded; the declared secret is never shown.
    expect(JSON.stringify(result)).not.toContain(SHOP_KEY);
    expect(messages[0]![1]).toContain('Back office key: [redacted secret]');
    // The default of an input the caller left out.
    const friendly = await client.getPrompt({ name: 'shop_faq', arguments: { question: 'Hi?' } });
    expect(texts(friendly.messages as TextMessage[])[0]![1]).toContain('in a friendly tone.');
  });

  it('[MC-8] gets an agent as its side A prompt starts', async () => {
    const result = await client.getPrompt({ name: 'welcome_desk', arguments: { member: 'Grace', occasion: 'signup' } });
    expect(texts(result.messages as TextMessage[])).toEqual([
      ['user', 'You write welcome notes for new members. Finish with the note.'],
      ['user', '{"member":"Grace","occasion":"signup"}'],
    ]);
  });

  it('[MC-8] refuses missing, unknown and invalid arguments and unknown prompts with -32602 naming them', async () => {
    await expect(client.getPrompt({ name: 'greet_customer', arguments: { tone: 'formal' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('prompt "greet_customer" needs the argument "customer"'),
    });
    await expect(client.getPrompt({ name: 'welcome_desk', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('"member", "occasion"'),
    });
    await expect(client.getPrompt({ name: 'greet_customer', arguments: { customer: 'Ada', tone: 'rude' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/invalid arguments for "greet_customer".*tone/),
    });
    await expect(
      client.getPrompt({ name: 'greet_customer', arguments: { customer: 'Ada', tone: 'formal', thread_id: 'x' } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('has no argument "thread_id"'),
    });
    await expect(client.getPrompt({ name: 'no_such_prompt' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt: no_such_prompt'),
    });
  });

  it('[MC-8] completes enum, literal and boolean arguments, and nothing for free text', async () => {
    const complete = async (name: string, argument: string, value: string) =>
      (await client.complete({ ref: { type: 'ref/prompt', name }, argument: { name: argument, value } })).completion;
    expect(await complete('greet_customer', 'tone', '')).toEqual({ values: ['friendly', 'formal', 'playful'], total: 3, hasMore: false });
    expect((await complete('greet_customer', 'tone', 'Fr')).values).toEqual(['friendly']);
    // Prefix matches first (any case), then those that contain what was typed.
    expect((await complete('greet_customer', 'tone', 'F')).values).toEqual(['friendly', 'formal', 'playful']);
    expect((await complete('greet_customer', 'tone', 'lay')).values).toEqual(['playful']);
    expect((await complete('greet_customer', 'language', 'd')).values).toEqual(['de']);
    expect((await complete('greet_customer', 'vip', 't')).values).toEqual(['true']);
    expect((await complete('shop_faq', 'tone', 'fo')).values).toEqual(['formal']);
    expect((await complete('welcome_desk', 'occasion', 'ann')).values).toEqual(['anniversary']);
    expect(await complete('greet_customer', 'customer', 'A')).toEqual({ values: [], total: 0, hasMore: false });
    await expect(complete('greet_customer', 'colour', '')).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('has no argument "colour"'),
    });
    await expect(complete('no_such_prompt', 'tone', '')).rejects.toMatchObject({ code: -32602 });
  });
});

describe('the MCP conformance suite, prompts and completion scenarios', () => {
  let http: HttpServerProcess;
  beforeAll(async () => {
    http = await startHttpServer({ agentsDir: AGENTS, env: ENV });
  }, 30_000);
  afterAll(async () => {
    await http?.stop();
  });

  itPassesConformance('MC-8', () => http, ['prompts-list', 'prompts-get-simple', 'prompts-get-with-args', 'completion-complete']);
});
