/**
 * A small OpenAI-compatible HTTP server for tests. It answers
 * `POST /v1/chat/completions` from a script of replies, records every request
 * it received, and fails loudly (HTTP 500 + `unexpected`) on a request beyond
 * its script, so tests can assert exactly what was sent to the model.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: unknown;
}

/** Token counts the reply reports (default: 10 in, 5 out). */
interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

export type ScriptedReply =
  | { text: string; toolCalls?: ScriptedToolCall[]; reasoning?: string; delayMs?: number; usage?: ScriptedUsage }
  | { toolCalls: ScriptedToolCall[]; text?: null; delayMs?: number; usage?: ScriptedUsage }
  | { status: number; error: string; delayMs?: number }
  /** A body sent as it is (malformed answers), with status 200 unless given. */
  | { raw: string; status?: number; delayMs?: number };

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model: string;
    messages: Array<{ role: string; content: unknown; [key: string]: unknown }>;
    tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
    [key: string]: unknown;
  };
}

/** The text of a request's first message: the system prompt, for the rules that tell prompts apart. */
export function systemText(body: RecordedRequest['body']): string {
  return String(body.messages[0]?.content ?? '');
}

/** Every user message of a request, one per line. */
export function userText(body: RecordedRequest['body']): string {
  return body.messages
    .filter((m) => m.role === 'user')
    .map((m) => String(m.content))
    .join('\n');
}

export class FakeModelServer {
  readonly requests: RecordedRequest[] = [];
  /** Requests that arrived when the script was already used up. */
  readonly unexpected: RecordedRequest[] = [];
  private readonly script: ScriptedReply[] = [];
  private server: Server | undefined;
  private port = 0;

  private readonly routes: Array<{ match: (body: RecordedRequest['body']) => boolean; replies: ScriptedReply[] }> = [];

  /** Queue replies, answered in order. */
  reply(...replies: ScriptedReply[]): this {
    this.script.push(...replies);
    return this;
  }

  /**
   * Queue replies for the requests `match` picks (say, by system prompt), in
   * order; other requests take the main script. Runs that go on at the same
   * time (a parent and its subagents) stay deterministic this way.
   */
  replyWhen(match: (body: RecordedRequest['body']) => boolean, ...replies: ScriptedReply[]): this {
    this.routes.push({ match, replies });
    return this;
  }

  /**
   * Answers requests that neither a route nor the script covers by rule
   * (say, for a client that calls tools as often as it likes).
   */
  answerWith(rule: (body: RecordedRequest['body']) => ScriptedReply | undefined): this {
    this.rule = rule;
    return this;
  }

  private rule: ((body: RecordedRequest['body']) => ScriptedReply | undefined) | undefined;

  /** Replies for requests whose system prompt starts with `prefix`. */
  replyToSystem(prefix: string, ...replies: ScriptedReply[]): this {
    return this.replyWhen((body) => systemText(body).startsWith(prefix), ...replies);
  }

  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  get remaining(): number {
    return this.script.length + this.routes.reduce((sum, route) => sum + route.replies.length, 0);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const recorded: RecordedRequest = {
          path: req.url ?? '',
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as RecordedRequest['body'],
        };
        if (!recorded.path.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
          return;
        }
        this.requests.push(recorded);
        const route = this.routes.find((r) => r.replies.length > 0 && r.match(recorded.body));
        const next = route ? route.replies.shift() : (this.script.shift() ?? this.rule?.(recorded.body));
        if (!next) {
          this.unexpected.push(recorded);
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'FakeModelServer: no scripted reply left' } }));
          return;
        }
        const send = () => {
          if ('raw' in next) {
            res.writeHead(next.status ?? 200, { 'content-type': 'application/json' });
            res.end(next.raw);
            return;
          }
          if ('status' in next) {
            res.writeHead(next.status, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { message: next.error, type: 'scripted' } }));
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(completion(recorded.body.model, next, this.requests.length)));
        };
        if (next.delayMs) setTimeout(send, next.delayMs);
        else send();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

function completion(model: string, reply: Exclude<ScriptedReply, { status: number } | { raw: string }>, n: number) {
  const toolCalls = reply.toolCalls?.map((call, i) => ({
    id: call.id ?? `call_${n}_${i}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }));
  return {
    id: `chatcmpl-${n}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(toolCalls?.length ? { tool_calls: toolCalls } : {}),
          ...('reasoning' in reply && reply.reasoning ? { reasoning: reply.reasoning } : {}),
        },
        finish_reason: toolCalls?.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: reply.usage
      ? {
          prompt_tokens: reply.usage.prompt_tokens,
          completion_tokens: reply.usage.completion_tokens,
          total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens,
          ...(reply.usage.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens } } : {}),
        }
      : { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}
