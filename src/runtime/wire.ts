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

export function toWireMessages(messages: readonly StoredMessage[], options: WireOptions): ModelRequestMessage[] {
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
            ...images.map((ref): ContentPart => ({ type: 'image', path: ref.path, mimeType: ref.mimeType, description: ref.description ?? ref.name })),
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

/** Image parts of tool attachments carry the resolved URL in `meta.imageUrls`, keyed by path. */
function resolvedParts(message: StoredMessage, parts: ContentPart[]): ContentPart[] {
  const urls = (message.meta?.imageUrls ?? {}) as Record<string, string>;
  return parts.map((part) => (part.type === 'image' && part.path && urls[part.path] ? { ...part, url: urls[part.path] } : part));
}

function nameOf(message: StoredMessage): { name?: string } {
  const name = message.meta?.name;
  return typeof name === 'string' ? { name } : {};
}

export function textOf(content: StoredMessage['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' ? part.text : describeMedia(part)))
    .join('\n');
}

function describeMedia(part: Exclude<ContentPart, { type: 'text' }>): string {
  const label = part.type === 'image' ? part.description ?? part.path ?? 'image' : part.name ?? part.path ?? 'file';
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
    return { type: 'text', text: part.type === 'image' ? `[image omitted: ${part.description ?? part.path ?? part.url ?? 'image'}]` : describeMedia(part) };
  });
}
