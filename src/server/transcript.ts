/**
 * How a thread reads as an MCP resource: a markdown transcript
 * (`agentport://threads/{id}`) and a JSON document of its messages
 * (`agentport://threads/{id}/messages`). Both show what the store holds;
 * messages are redacted when they are stored, and resources.ts redacts the
 * rendered text once more on the way out.
 */
import type { AttachmentRef } from '../definitions/types.js';
import type { ContentPart, StoredMessage, ThreadRecord } from '../store/types.js';
import { attachmentUri, messagesUri, threadUri } from './resourceUris.js';

/** The thread as markdown: a header, then each message under a heading naming its role and seq. */
export function renderTranscript(thread: ThreadRecord, messages: readonly StoredMessage[]): string {
  const lines: string[] = [`# ${thread.prompt}: thread ${thread.id}`, ''];
  lines.push(`- Status: ${thread.status}`);
  lines.push(`- Started: ${thread.createdAt}`);
  lines.push(`- Last change: ${lastChange(thread, messages)}`);
  if (thread.parentId) lines.push(`- Parent thread: ${threadUri(thread.parentId)}`);
  lines.push(`- Messages: ${messages.length} (as JSON: ${messagesUri(thread.id)})`);
  for (const message of messages) {
    lines.push('', `## ${heading(message)}`, '');
    const body = renderMessage(thread.id, message);
    lines.push(body || '_(no content)_');
  }
  return `${lines.join('\n')}\n`;
}

/** The thread and its messages as one JSON document (snake_case, like tool results). */
export function messagesDocument(thread: ThreadRecord, messages: readonly StoredMessage[]): Record<string, unknown> {
  return {
    thread_id: thread.id,
    prompt: thread.prompt,
    status: thread.status,
    created_at: thread.createdAt,
    updated_at: thread.updatedAt,
    ...(thread.parentId ? { parent_id: thread.parentId } : {}),
    messages: messages.map((message) => messageJson(thread.id, message)),
  };
}

function messageJson(threadId: string, message: StoredMessage): Record<string, unknown> {
  // A tool's stack trace is for the server's log, not for readers of the thread.
  const { stack: _stack, ...meta } = message.meta ?? {};
  return {
    seq: message.seq,
    id: message.id,
    created_at: message.createdAt,
    role: message.role,
    ...(message.side ? { side: message.side } : {}),
    content: message.content,
    ...(message.toolCalls?.length
      ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })) }
      : {}),
    ...(message.toolCallId ? { tool_call_id: message.toolCallId } : {}),
    ...(message.toolName ? { tool_name: message.toolName } : {}),
    ...(message.toolStatus ? { tool_status: message.toolStatus } : {}),
    ...(message.attachments?.length ? { attachments: message.attachments.map((ref) => withUri(threadId, ref)) } : {}),
    ...(message.reasoning ? { reasoning: message.reasoning } : {}),
    ...(Object.keys(meta).length ? { meta } : {}),
  };
}

function withUri(threadId: string, ref: AttachmentRef): AttachmentRef & { uri?: string } {
  const uri = attachmentUri(threadId, ref.path);
  return uri ? { ...ref, uri } : ref;
}

function lastChange(thread: ThreadRecord, messages: readonly StoredMessage[]): string {
  const last = messages.at(-1)?.createdAt;
  return last && last > thread.updatedAt ? last : thread.updatedAt;
}

function heading(message: StoredMessage): string {
  const side = message.side ? ` (side ${message.side.toUpperCase()})` : '';
  const who =
    message.role === 'tool'
      ? `Tool result${message.toolName ? ` \`${message.toolName}\`` : ''}${message.toolStatus === 'error' ? ' (error)' : ''}`
      : `${message.role[0]!.toUpperCase()}${message.role.slice(1)}${side}`;
  return `${who} · #${message.seq} · ${message.createdAt}`;
}

function renderMessage(threadId: string, message: StoredMessage): string {
  const parts: string[] = [];
  if (message.reasoning)
    parts.push(
      message.reasoning
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n'),
    );
  const content = renderContent(threadId, message.content);
  if (content) parts.push(content);
  for (const call of message.toolCalls ?? []) {
    parts.push(`Tool call \`${call.name}\` (\`${call.id}\`):\n\n${fenced(prettyJson(call.arguments), 'json')}`);
  }
  if (message.attachments?.length) {
    parts.push(['Attachments:', ...message.attachments.map((ref) => `- ${fileLink(threadId, ref)}`)].join('\n'));
  }
  return parts.join('\n\n');
}

function renderContent(threadId: string, content: StoredMessage['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => renderPart(threadId, part))
    .filter(Boolean)
    .join('\n\n');
}

function renderPart(threadId: string, part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image': {
      const target = part.path
        ? (attachmentUri(threadId, part.path) ?? part.path)
        : part.url && !part.url.startsWith('data:')
          ? part.url
          : undefined;
      const alt = (part.description ?? 'image').replace(/[[\]]/g, '');
      return target
        ? `![${alt}](${target})`
        : `_(${part.url?.startsWith('data:') ? 'inline image' : 'image'}${part.description ? `: ${part.description}` : ''})_`;
    }
    case 'file': {
      const name = part.name ?? part.path?.split('/').pop() ?? 'file';
      const target = part.path
        ? (attachmentUri(threadId, part.path) ?? part.path)
        : part.url && !part.url.startsWith('data:')
          ? part.url
          : undefined;
      return target ? `[${name.replace(/[[\]]/g, '')}](${target})` : `_(file ${name})_`;
    }
  }
}

function fileLink(threadId: string, ref: AttachmentRef): string {
  const uri = attachmentUri(threadId, ref.path);
  const label = ref.name.replace(/[[\]]/g, '');
  const about = `${ref.mimeType}, ${ref.size} bytes${ref.description ? `: ${ref.description}` : ''}`;
  return uri ? `[${label}](${uri}) (${about})` : `${label} at \`${ref.path}\` (${about})`;
}

/** Arguments as the model sent them, indented when they are JSON. */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A code block whose fence is longer than any run of backticks in the text. */
function fenced(text: string, language: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}
