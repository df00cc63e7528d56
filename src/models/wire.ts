/**
 * Pure translation from stored messages to Chat Completions messages. No I/O:
 * image parts arrive here with their `url` already resolved.
 */
import type { ModelRequestMessage } from '../definitions/types.js';
import type { ContentPart, StoredMessage } from '../store/types.js';

export interface WireOptions {
  /** Images in the most recent N messages are sent as images; older ones as a text note. */
  recentImageThreshold: number;
  /** Send stored reasoning back with assistant messages (reasoning.include). */
  includeReasoning: boolean;
}

/** The fields of a message the wire needs (stored messages and rendered templates both fit). */
export type WireInput = Pick<StoredMessage, 'role' | 'content'> &
  Partial<Pick<StoredMessage, 'toolCalls' | 'toolCallId' | 'toolName' | 'attachments' | 'reasoning' | 'meta'>>;

export function toWireMessages(input: readonly WireInput[], options: WireOptions): ModelRequestMessage[] {
  const messages = pairToolCalls(input);
  const out: ModelRequestMessage[] = [];
  // Images from consecutive tool results are emitted together after the last
  // result: a user message may not sit between the results of one response.
  const pendingImages: unknown[] = [];
  const flushImages = (moreToolResultsFollow: boolean) => {
    if (moreToolResultsFollow) return;
    for (const content of pendingImages.splice(0)) out.push({ role: 'user', content });
  };
  const firstRecent = messages.length - options.recentImageThreshold;
  messages.forEach((message, index) => {
    const imagesAllowed = index >= firstRecent;
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: textOf(message.content) });
        break;
      case 'user':
        out.push({ role: 'user', content: userContent(message.content, imagesAllowed), ...nameOf(message) });
        break;
      case 'assistant':
        out.push({
          ...nameOf(message),
          role: 'assistant',
          content: message.content === null ? null : textOf(message.content),
          ...(message.toolCalls?.length
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
          ...(options.includeReasoning && message.reasoning ? { reasoning: message.reasoning } : {}),
        });
        break;
      case 'tool': {
        out.push({ role: 'tool', tool_call_id: message.toolCallId ?? '', content: textOf(message.content) || '(empty result)' });
        // Tool messages cannot carry images in Chat Completions: images a tool
        // produced follow as a user message right after the results.
        const images = (message.attachments ?? []).filter((a) => a.mimeType.startsWith('image/'));
        if (images.length) {
          const parts: ContentPart[] = [
            { type: 'text', text: `Images returned by the tool ${message.toolName ?? ''}:` },
            ...images.map((ref): ContentPart => ({
              type: 'image',
              path: ref.path,
              mimeType: ref.mimeType,
              description: ref.description ?? ref.name,
            })),
          ];
          pendingImages.push(userContent(resolvedParts(message, parts), imagesAllowed));
        }
        break;
      }
    }
    flushImages(messages[index + 1]?.role === 'tool');
  });
  return out;
}

/**
 * Chat Completions rejects a tool call without its result, a result without
 * its call, and anything between a call and its result. A run interrupted
 * mid-step (a crash, a cancellation) can leave unmatched halves in a thread:
 * they are dropped. A message stored while tools ran (injected by a tool)
 * is sent after the results of that step.
 */
function pairToolCalls(messages: readonly WireInput[]): WireInput[] {
  const answered = new Set(messages.filter((m) => m.role === 'tool' && m.toolCallId).map((m) => m.toolCallId!));
  const called = new Set<string>();
  const out: WireInput[] = [];
  const awaiting = new Set<string>();
  let held: WireInput[] = [];
  const release = () => {
    awaiting.clear();
    out.push(...held);
    held = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!called.has(message.toolCallId ?? '')) continue;
      out.push(message);
      awaiting.delete(message.toolCallId!);
      if (awaiting.size === 0) release();
      continue;
    }
    if (message.role === 'assistant' && message.toolCalls?.length) {
      release();
      const toolCalls = message.toolCalls.filter((call) => answered.has(call.id));
      for (const call of toolCalls) {
        called.add(call.id);
        awaiting.add(call.id);
      }
      if (toolCalls.length === message.toolCalls.length) out.push(message);
      else if (toolCalls.length > 0) out.push({ ...message, toolCalls });
      else if (textOf(message.content) !== '') out.push({ ...message, toolCalls: [] });
      continue;
    }
    if (awaiting.size > 0) held.push(message);
    else out.push(message);
  }
  release();
  return out;
}

/** Image parts of tool attachments carry the resolved URL in `meta.imageUrls`, keyed by path. */
function resolvedParts(message: WireInput, parts: ContentPart[]): ContentPart[] {
  const urls = (message.meta?.imageUrls ?? {}) as Record<string, string>;
  return parts.map((part) => (part.type === 'image' && part.path && urls[part.path] ? { ...part, url: urls[part.path] } : part));
}

function nameOf(message: WireInput): { name?: string } {
  const name = message.meta?.name;
  return typeof name === 'string' ? { name } : {};
}

export function textOf(content: StoredMessage['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : describeMedia(part))).join('\n');
}

function describeMedia(part: Exclude<ContentPart, { type: 'text' }>): string {
  const label = part.type === 'image' ? (part.description ?? part.path ?? 'image') : (part.name ?? part.path ?? 'file');
  return `[${part.type}: ${label}]`;
}

function userContent(content: StoredMessage['content'], imagesAllowed: boolean): unknown {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  if (!content.some((part) => part.type !== 'text')) return textOf(content);
  return content.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image' && imagesAllowed && part.url) {
      return { type: 'image_url', image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) } };
    }
    if (part.type === 'file' && part.url && part.url.startsWith('data:')) {
      return { type: 'file', file: { file_data: part.url, filename: part.name ?? 'file' } };
    }
    return {
      type: 'text',
      text: part.type === 'image' ? `[image omitted: ${part.description ?? part.path ?? part.url ?? 'image'}]` : describeMedia(part),
    };
  });
}
