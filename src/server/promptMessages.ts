/**
 * What a run would start with, as MCP prompt messages. The input is the
 * runtime's own opening (system preamble and first turn, in the model wire
 * shape the runtime sends), so `prompts/get` shows exactly what a call
 * would send, not a second rendering of it.
 *
 * MCP prompt messages are `user` or `assistant` with one content block each:
 * system text becomes a user message (the instruction the host's model
 * follows), a multi-part message becomes several messages of its role, and
 * tool calls and results (a Prompty few-shot example) become plain text.
 */
import type { ContentBlock, PromptMessage } from '@modelcontextprotocol/server';
import type { ModelRequestMessage } from '../definitions/types.js';

export function promptMessages(messages: readonly ModelRequestMessage[]): PromptMessage[] {
  const out: PromptMessage[] = [];
  const push = (role: PromptMessage['role'], blocks: ContentBlock[]) => {
    for (const content of blocks) out.push({ role, content });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        push('user', contentBlocks(message.content));
        break;
      case 'assistant':
        push('assistant', [...contentBlocks(message.content), ...toolCallBlocks(message.tool_calls)]);
        break;
      case 'tool':
        push(
          'user',
          textBlocks(
            `Result of the tool call ${typeof message.tool_call_id === 'string' ? message.tool_call_id : ''}:\n${textOf(message.content)}`,
          ),
        );
        break;
    }
  }
  return out;
}

/** Wire content (a string or Chat Completions parts) as MCP content blocks. */
function contentBlocks(content: unknown): ContentBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return textBlocks(content);
  if (!Array.isArray(content)) return textBlocks(JSON.stringify(content));
  return content.flatMap((part: unknown): ContentBlock[] => {
    if (!isRecord(part)) return [];
    if (part.type === 'text' && typeof part.text === 'string') return textBlocks(part.text);
    if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string')
      return [mediaBlock(part.image_url.url, 'image')];
    if (part.type === 'file' && isRecord(part.file) && typeof part.file.file_data === 'string') {
      return [mediaBlock(part.file.file_data, typeof part.file.filename === 'string' ? part.file.filename : 'file')];
    }
    return textBlocks(JSON.stringify(part));
  });
}

/**
 * A `data:` image is sent inline; anything else (an http(s) URL, a data URL
 * of another type) is linked, so the host decides whether to fetch it.
 */
function mediaBlock(url: string, name: string): ContentBlock {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data && data[1]!.startsWith('image/')) return { type: 'image', data: data[2]!, mimeType: data[1]! };
  return { type: 'resource_link', uri: url, name, ...(data ? { mimeType: data[1]! } : {}) };
}

function toolCallBlocks(calls: unknown): ContentBlock[] {
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((call: unknown) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
    return fn ? textBlocks(`Calls the tool ${String(fn.name)} with ${String(fn.arguments)}`) : [];
  });
}

function textBlocks(text: string): ContentBlock[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: unknown) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
