/**
 * Context assembly: which stored messages a step sends to the model.
 * This call's messages are always included; earlier calls' only with
 * `includeChat`, and their tool calls and results only with
 * `includePastTools`. In a dual_ai session each side sees the thread its own
 * way (agents/sideView.ts). Images are loaded from the thread's files for the
 * most recent `recentImageThreshold` messages only.
 */
import type { ModelRequestMessage, PromptDefinition, ThreadState } from '../../definitions/types.js';
import { toWireMessages } from '../../models/wire.js';
import type { ContentPart, Store, StoredMessage } from '../../store/types.js';
import { sideView } from '../agents/sideView.js';
import type { Run, Side } from '../run/types.js';

const DEFAULT_RECENT_IMAGE_THRESHOLD = 10;

/** The messages of one step's model request, hooks applied and secrets redacted. */
export async function assembleContext(run: Run, side: Side, state: ThreadState, insistOnTool: boolean): Promise<ModelRequestMessage[]> {
  const def = side.prompt.definition;
  const all = run.messages;
  const start = all.findIndex((m) => m.seq >= run.sessionStartSeq);
  const earlier = [...run.parentChat, ...(start < 0 ? all : all.slice(0, start))];
  const current = start < 0 ? [] : all.slice(start);
  let history = selectHistory(def, earlier, current);
  if (run.dual) history = sideView(history, side.key);
  if (side.hooks.has('filter_messages')) history = await side.hooks.transform('filter_messages', state, history);
  const threshold = def.recentImageThreshold ?? DEFAULT_RECENT_IMAGE_THRESHOLD;
  if (hasStoredImages(history, threshold)) history = await resolveImages(run.services.store, run.thread.id, history, threshold);
  let messages: ModelRequestMessage[] = [
    ...side.preamble,
    ...toWireMessages(history, { recentImageThreshold: threshold, includeReasoning: def.reasoning?.include === true }),
  ];
  if (insistOnTool) messages.push({ role: 'user', content: 'Answer by calling one of the available tools.' });
  if (side.hooks.has('prefilter_llm_history')) messages = await side.hooks.transform('prefilter_llm_history', state, messages);
  return run.redactor.deep(messages);
}

function selectHistory(prompt: PromptDefinition, earlier: readonly StoredMessage[], current: readonly StoredMessage[]): StoredMessage[] {
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

/** Whether a recent message has an image kept in the thread's files, which resolveImages loads. */
function hasStoredImages(messages: readonly StoredMessage[], threshold: number): boolean {
  for (let i = Math.max(0, messages.length - threshold); i < messages.length; i++) {
    const message = messages[i]!;
    if (Array.isArray(message.content) && message.content.some(isStoredImage)) return true;
    if (message.role === 'tool' && message.attachments?.some((a) => a.mimeType.startsWith('image/'))) return true;
  }
  return false;
}

function isStoredImage(part: ContentPart): boolean {
  return part.type === 'image' && Boolean(part.path) && !part.url;
}

/** Loads the image data of recent messages as data URLs (on copies; the store is untouched). */
async function resolveImages(store: Store, threadId: string, messages: StoredMessage[], threshold: number): Promise<StoredMessage[]> {
  const first = Math.max(0, messages.length - threshold);
  const out = messages.slice();
  for (let i = first; i < messages.length; i++) {
    const message = messages[i]!;
    if (Array.isArray(message.content) && message.content.some(isStoredImage)) {
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
