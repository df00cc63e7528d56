/**
 * How a call opens its turn. A TypeScript prompt sends its system text and
 * stores the input as one user message. A `.prompty` prompt renders its
 * template with the call's arguments: what precedes the thread marker (or, with
 * no marker, everything before the final user messages) is the preamble sent
 * at every step; the rest is stored as the turn's first messages.
 */
import type { ModelRequestMessage } from '../definitions/types.js';
import { AgentportError } from '../errors.js';
import type { PromptyChatMessage, PromptyMessage, PromptyPart } from '../prompty/types.js';
import type { LoadedPrompt } from '../registry/types.js';
import type { ContentPart, NewMessage } from '../store/types.js';

export interface OpenedTurn {
  /** Messages sent before the history at every step (a prompty preamble), or the system prompt. */
  preamble: ModelRequestMessage[];
  /** Messages stored as the start of this turn. */
  turn: NewMessage[];
  /** Tool names hoisted from a prompty body `tools:` section. */
  extraTools: string[];
}

export async function openTurn(prompt: LoadedPrompt, args: Record<string, unknown>, userMessage: string | ContentPart[]): Promise<OpenedTurn> {
  if (!prompt.prompty) {
    return { preamble: [{ role: 'system', content: prompt.systemText }], turn: [{ role: 'user', content: userMessage }], extraTools: [] };
  }
  const { renderPrompty } = await import('../prompty/render.js');
  let rendered;
  try {
    rendered = await renderPrompty(prompt.prompty, args);
  } catch (error) {
    throw new AgentportError('INVALID_ARGUMENTS', `cannot render ${prompt.name}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { before, after } = splitAtThread(rendered.messages);
  const extraTools = rendered.tools.map((tool) => (typeof tool === 'string' ? tool : String(tool.name ?? tool.id ?? '')));
  return { preamble: before.map(toWire), turn: after.map(toStored), extraTools };
}

function splitAtThread(messages: PromptyMessage[]): { before: PromptyChatMessage[]; after: PromptyChatMessage[] } {
  const marker = messages.findIndex((m) => m.kind === 'thread');
  const chat = (list: PromptyMessage[]) => list.filter((m): m is PromptyChatMessage => m.kind === 'message');
  if (marker >= 0) return { before: chat(messages.slice(0, marker)), after: chat(messages.slice(marker + 1)) };
  const all = chat(messages);
  let start = all.length;
  while (start > 0 && all[start - 1]!.role === 'user') start -= 1;
  return { before: all.slice(0, start), after: all.slice(start) };
}

function nameOf(message: PromptyChatMessage): string | undefined {
  return message.name ?? message.attributes.name;
}

/** A preamble message, straight to Chat Completions shape. */
function toWire(message: PromptyChatMessage): ModelRequestMessage {
  const name = nameOf(message);
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: textOf(message.content) || null,
        ...(message.toolCalls?.length
          ? { tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : {}),
        ...(name ? { name } : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: textOf(message.content) };
    case 'user':
      return { role: 'user', content: wireParts(message.content), ...(name ? { name } : {}) };
    default:
      return { role: 'system', content: textOf(message.content) };
  }
}

/** A turn message, in the store's shape (attributes such as `name` are kept in meta). */
function toStored(message: PromptyChatMessage): NewMessage {
  const name = nameOf(message);
  const content: ContentPart[] = message.content.map((part): ContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image') return { type: 'image', url: part.url, ...(part.attributes.detail ?? part.attributes.quality ? { detail: part.attributes.detail ?? part.attributes.quality! } : {}) };
    return { type: 'file', url: part.url, ...(part.attributes.name ? { name: part.attributes.name } : {}) };
  });
  const onlyText = content.every((p) => p.type === 'text');
  return {
    role: message.role,
    content: onlyText ? textOf(message.content) : content,
    ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
    ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
    ...(name ? { meta: { name } } : {}),
  };
}

function textOf(parts: PromptyPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}

function wireParts(parts: PromptyPart[]): unknown {
  if (parts.every((p) => p.type === 'text')) return textOf(parts);
  return parts.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image') {
      const { detail, quality } = part.attributes;
      const level = detail ?? quality;
      return { type: 'image_url', image_url: { url: part.url, ...(level ? { detail: level } : {}) } };
    }
    return { type: 'file', file: { file_data: part.url, filename: part.attributes.name ?? 'file' } };
  });
}
