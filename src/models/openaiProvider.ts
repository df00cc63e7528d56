/**
 * The built-in OpenAI-compatible provider: Chat Completions through the
 * `openai` package, so it works with OpenAI, OpenRouter, Ollama, LM Studio,
 * vLLM and llama.cpp's server alike.
 */
import type { ModelProvider, ModelRequest, ModelResponse, ModelToolCall } from '../definitions/types.js';
import { logToStderr } from '../log.js';

export interface OpenAIProviderOptions {
  apiKey: string;
  baseURL?: string;
  timeoutMs?: number;
  /** Retries inside the openai client; 0 by default, since callModel retries for every provider. */
  maxRetries?: number;
  /**
   * `http`: requests over node:http (modelFetch.ts), unless fetch has been replaced or given a
   * dispatcher of someone else's when the client is made; `fetch` (default): `globalThis.fetch`.
   */
  transport?: ModelTransport;
  /** A fetch of the caller's own, in place of the transport's. */
  fetch?: typeof fetch;
}

export type ModelTransport = 'http' | 'fetch';

type OpenAIClient = import('openai').OpenAI;

export class OpenAICompatibleProvider implements ModelProvider {
  private client: Promise<OpenAIClient> | undefined;
  /** The client once loaded: a call then starts without waiting a turn for it. */
  private ready: OpenAIClient | undefined;

  constructor(private readonly options: OpenAIProviderOptions) {}

  async complete(request: ModelRequest, { signal }: { signal?: AbortSignal }): Promise<ModelResponse> {
    const client = this.ready ?? (await this.getClient());
    // The request is already in Chat Completions shape; the SDK's types are
    // stricter than what OpenAI-compatible servers accept, hence the cast.
    const body = { ...request, stream: false } as unknown as Parameters<OpenAIClient['chat']['completions']['create']>[0];
    let completion: import('openai').OpenAI.ChatCompletion;
    try {
      completion = (await client.chat.completions.create(body, signal ? { signal } : {})) as import('openai').OpenAI.ChatCompletion;
    } catch (error) {
      // The SDK's connection and timeout errors are all named "Error": mark them for callModel's retries.
      const { APIConnectionError } = await import('openai');
      if (error instanceof APIConnectionError || error instanceof SyntaxError) throw Object.assign(error, { retryable: true });
      throw error;
    }
    if (typeof completion !== 'object' || completion === null || !Array.isArray(completion.choices) || completion.choices.length === 0) {
      throw malformed('the server answered without any choices (is baseURL an OpenAI-compatible API?)');
    }
    const choice = completion.choices[0];
    const message = choice?.message;
    if (typeof message !== 'object' || message === null) throw malformed('the server answered with a choice that has no message');
    const toolCalls: ModelToolCall[] = [];
    for (const call of message?.tool_calls ?? []) {
      if (call.type === 'function') {
        toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
      }
    }
    // Reasoning text comes under different names depending on the server.
    const extra = message as unknown as { reasoning?: unknown; reasoning_content?: unknown } | undefined;
    const reasoning =
      typeof extra?.reasoning === 'string'
        ? extra.reasoning
        : typeof extra?.reasoning_content === 'string'
          ? extra.reasoning_content
          : undefined;
    return {
      text: message?.content ?? null,
      toolCalls,
      ...(reasoning !== undefined ? { reasoning } : {}),
      ...(choice?.finish_reason ? { finishReason: choice.finish_reason } : {}),
      ...(completion.usage
        ? {
            usage: {
              promptTokens: completion.usage.prompt_tokens,
              completionTokens: completion.usage.completion_tokens,
              ...(completion.usage.prompt_tokens_details?.cached_tokens
                ? { cachedTokens: completion.usage.prompt_tokens_details.cached_tokens }
                : {}),
            },
          }
        : {}),
    };
  }

  /** The fetch the client gets: the caller's, else the transport's when it can be used, else the client's default. */
  private async transportFetch(): Promise<typeof fetch | undefined> {
    if (this.options.fetch) return this.options.fetch;
    if (this.options.transport !== 'http') return undefined;
    return (await import('./modelFetch.js')).modelFetchFor('http');
  }

  private getClient(): Promise<OpenAIClient> {
    // Loaded on the first model call (the transport too: it loads node:https and zlib): listing tools never pays for it.
    this.client ??= Promise.all([import('openai'), this.transportFetch()]).then(
      ([{ OpenAI }, fetch]) =>
        (this.ready = new OpenAI({
          apiKey: this.options.apiKey,
          ...(this.options.baseURL ? { baseURL: this.options.baseURL } : {}),
          ...(this.options.timeoutMs ? { timeout: this.options.timeoutMs } : {}),
          maxRetries: this.options.maxRetries ?? 0,
          ...(fetch ? { fetch } : {}),
          // The client's default logger is console, which writes to stdout.
          logger: { error: logToStderr, warn: logToStderr, info: logToStderr, debug: logToStderr },
        })),
    );
    return this.client;
  }
}

/** An answer that is not a usable completion: retried like a server error, since it usually is one. */
function malformed(message: string): Error {
  return Object.assign(new Error(message), { retryable: true });
}
