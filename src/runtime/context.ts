/**
 * Context assembly: which stored messages a step sends to the model.
 * The current turn (this call's messages) is always included; earlier turns
 * only with `includeChat`, and their tool calls and results only with
 * `includePastTools`. Images are loaded from the thread's files for the most
 * recent `recentImageThreshold` messages only.
 */
import type { PromptDefinition } from '../definitions/types.js';
import type { ContentPart, Store, StoredMessage } from '../store/types.js';

export const DEFAULT_RECENT_IMAGE_THRESHOLD = 10;

export function selectHistory(
  prompt: PromptDefinition,
  earlier: readonly StoredMessage[],
  current: readonly StoredMessage[],
): StoredMessage[] {
  if (!prompt.includeChat) return [...current];
  const past = prompt.includePastTools ? [...earlier] : earlier.flatMap(withoutTools);
  return [...past, ...current];
}

/** An earlier message as chat only: tool results dropped, tool calls stripped. */
export function withoutTools(message: StoredMessage): StoredMessage[] {
  if (message.role === 'tool') return [];
  if (message.role === 'assistant' && message.toolCalls?.length) {
    if (message.content === null || message.content === '') return [];
    const { toolCalls: _dropped, ...rest } = message;
    return [rest];
  }
  return [message];
}

/** Loads the image data of recent messages as data URLs (on copies; the store is untouched). */
export async function resolveImages(
  store: Store,
  threadId: string,
  messages: StoredMessage[],
  threshold: number,
): Promise<StoredMessage[]> {
  const first = Math.max(0, messages.length - threshold);
  const out = messages.slice();
  for (let i = first; i < messages.length; i++) {
    const message = messages[i]!;
    if (Array.isArray(message.content) && message.content.some((p) => p.type === 'image' && p.path && !p.url)) {
      const content: ContentPart[] = [];
      for (const part of message.content) {
        if (part.type === 'image' && part.path && !part.url) {
          const url = await dataUrl(store, message.threadId ?? threadId, part.path);
          content.push(url ? { ...part, url } : part);
        } else content.push(part);
      }
      out[i] = { ...message, content };
    }
    const images = (message.attachments ?? []).filter((a) => a.mimeType.startsWith('image/'));
    if (message.role === 'tool' && images.length) {
      const imageUrls: Record<string, string> = {};
      for (const ref of images) {
        const url = await dataUrl(store, message.threadId ?? threadId, ref.path);
        if (url) imageUrls[ref.path] = url;
      }
      out[i] = { ...out[i]!, meta: { ...out[i]!.meta, imageUrls } };
    }
  }
  return out;
}

async function dataUrl(store: Store, threadId: string, path: string): Promise<string | undefined> {
  try {
    const file = await store.readFile(threadId, path);
    if (!file) return undefined;
    return `data:${file.ref.mimeType};base64,${Buffer.from(file.data).toString('base64')}`;
  } catch {
    return undefined;
  }
}
