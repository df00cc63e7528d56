/**
 * How a call opens its turn. A TypeScript prompt sends its system text and
 * stores the input as one user message. A `.prompty` prompt renders its
 * template with the call's arguments: what precedes the thread marker (or, with
 * no marker, everything before the final user messages) is the preamble sent
 * at every step; the rest is stored as the turn's first messages.
 */
import type { ModelRequestMessage } from '../../definitions/types.js';
import { AgentportError, errorMessage, isAgentportError } from '../../errors.js';
import type { PromptyChatMessage, PromptyMessage, PromptyPart } from '../../prompty/types.js';
import type { LoadedPrompt } from '../../registry/types.js';
import type { ContentPart, NewMessage } from '../../store/types.js';
import { toWireMessages } from '../../models/wire.js';

export interface OpenedTurn {
  /** Messages sent before the history at every step (a prompty preamble), or the system prompt. */
  preamble: ModelRequestMessage[];
  /** Messages stored as the start of this turn. */
  turn: NewMessage[];
  /** Tool names hoisted from a prompty body `tools:` section. */
  extraTools: string[];
}

/**
 * @param userMessage the input as a user message (used whole by TypeScript prompts, and by a
 *   `.prompty` prompt whose template renders no turn)
 */
export async function openTurn(prompt: LoadedPrompt, args: Record<string, unknown>, userMessage: string): Promise<OpenedTurn> {
  if (!prompt.prompty) return openPlainTurn(prompt, userMessage);
  const input: NewMessage = { role: 'user', content: userMessage };
  const { renderPrompty } = await import('../../prompty/render.js');
  let rendered;
  try {
    rendered = await renderPrompty(prompt.prompty, args);
  } catch (error) {
    // A template that cannot render with these inputs: PROMPTY_RENDER with where it failed.
    const data = isAgentportError(error) ? error.data : undefined;
    throw new AgentportError('PROMPTY_RENDER', `cannot render ${prompt.name}: ${errorMessage(error)}`, data, { cause: error });
  }
  const { before, after } = splitAtThread(rendered.messages);
  const extraTools = rendered.tools.map((tool) =>
    typeof tool === 'string' ? tool : ([tool.name, tool.id].find((v): v is string => typeof v === 'string') ?? ''),
  );
  // The preamble is sent as it is at every step: no image threshold applies to it.
  const preamble = toWireMessages(before.map(toStored), { recentImageThreshold: Number.POSITIVE_INFINITY, includeReasoning: false });
  const turn = after.map(toStored);
  if (turn.length === 0) return { preamble, turn: [input], extraTools };
  return { preamble, turn, extraTools };
}

/** A TypeScript prompt's turn: its system text, and the input as one user message (nothing to wait for). */
export function openPlainTurn(prompt: LoadedPrompt, userMessage: string): OpenedTurn {
  return { preamble: [{ role: 'system', content: prompt.systemText }], turn: [{ role: 'user', content: userMessage }], extraTools: [] };
}

/** The turn with files added to its last user message. */
export function attachToTurn(turn: NewMessage[], attachments: ContentPart[]): NewMessage[] {
  const last = turn.findLastIndex((m) => m.role === 'user');
  if (!attachments.length || last < 0) return turn;
  const message = turn[last]!;
  const parts: ContentPart[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...(message.content ?? [])];
  const out = [...turn];
  out[last] = { ...message, content: [...parts, ...attachments] };
  return out;
}

const DETAIL_LEVELS = new Set(['low', 'high', 'auto']);

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

/** A turn message, in the store's shape (attributes such as `name` are kept in meta). */
function toStored(message: PromptyChatMessage): NewMessage {
  const name = nameOf(message);
  const content: ContentPart[] = message.content.map((part): ContentPart => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (part.type === 'image') {
      // `detail` (or Prompty's `quality`) maps to the image_url detail level when it is one.
      const detail = [part.attributes.detail, part.attributes.quality].find((v) => v !== undefined && DETAIL_LEVELS.has(v));
      return { type: 'image', url: part.url, ...(detail ? { detail } : {}) };
    }
    return { type: 'file', url: part.url, ...(part.attributes.name ? { name: part.attributes.name } : {}) };
  });
  const onlyText = content.every((p) => p.type === 'text');
  const text = textOf(message.content);
  return {
    role: message.role,
    // An assistant turn that only calls tools has no content (null, as the API sends it).
    content: onlyText ? (text === '' && message.toolCalls?.length ? null : text) : content,
    ...(message.toolCalls?.length ? { toolCalls: message.toolCalls } : {}),
    ...(message.toolCallId ? { toolCallId: message.toolCallId } : {}),
    ...(name ? { meta: { name } } : {}),
  };
}

function textOf(parts: PromptyPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
}
