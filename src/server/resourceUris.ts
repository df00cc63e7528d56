/**
 * The URIs of agentport's MCP resources (see resources.ts):
 *
 * - `agentport://threads/{thread_id}`: the thread as a markdown transcript
 * - `agentport://threads/{thread_id}/messages`: its messages as JSON
 * - `agentport://threads/{thread_id}/attachments/{path}`: a file under the
 *   thread's `/attachments/` (each path segment percent-encoded)
 *
 * Kept apart from resources.ts so that tool results can link attachments
 * without loading the resource handlers.
 */
import type { ResourceLink } from '@modelcontextprotocol/server';
import type { AttachmentRef } from '../definitions/types.js';
import type { RunResult } from '../runtime/types.js';

const THREADS_PREFIX = 'agentport://threads/';
/** Where a thread's attachments live in its files. */
const ATTACHMENTS_DIR = '/attachments/';

export type ThreadResource =
  | { kind: 'thread'; threadId: string }
  | { kind: 'messages'; threadId: string }
  | { kind: 'attachment'; threadId: string; /** The thread path, `/attachments/...`. */ path: string };

export function threadUri(threadId: string): string {
  return `${THREADS_PREFIX}${encodeURIComponent(threadId)}`;
}

export function messagesUri(threadId: string): string {
  return `${threadUri(threadId)}/messages`;
}

/** The URI of a thread file under `/attachments/`; undefined for a path elsewhere. */
export function attachmentUri(threadId: string, path: string): string | undefined {
  if (!path.startsWith(ATTACHMENTS_DIR) || path.length === ATTACHMENTS_DIR.length) return undefined;
  const rest = path.slice(ATTACHMENTS_DIR.length).split('/').map(encodeURIComponent).join('/');
  return `${threadUri(threadId)}/attachments/${rest}`;
}

const RESOURCE_URI = /^agentport:\/\/threads\/([^/?#]+)(?:\/(messages|attachments\/([^?#]+)))?$/;

/** What a URI names, or undefined when it is not one of agentport's resource URIs. */
export function parseResourceUri(uri: string): ThreadResource | undefined {
  const match = RESOURCE_URI.exec(uri);
  if (!match) return undefined;
  try {
    const threadId = decodeURIComponent(match[1]!);
    if (!match[2]) return { kind: 'thread', threadId };
    if (match[2] === 'messages') return { kind: 'messages', threadId };
    const segments = match[3]!.split('/').map(decodeURIComponent);
    // The store checks paths too (no escaping the thread's files); empty and dot segments never name a file.
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('/'))) return undefined;
    return { kind: 'attachment', threadId, path: `${ATTACHMENTS_DIR}${segments.join('/')}` };
  } catch {
    return undefined;
  }
}

/**
 * The files a run produced, each once: those its tool calls stored
 * (newest last) and those its session handed over (sessionStop's
 * attachments). A handed-over path is known by its path only.
 */
export function producedFiles(result: RunResult): Array<Pick<AttachmentRef, 'path' | 'name'> & Partial<AttachmentRef>> {
  const seen = new Map<string, Pick<AttachmentRef, 'path' | 'name'> & Partial<AttachmentRef>>();
  for (const call of result.toolCalls) for (const ref of call.attachments ?? []) seen.set(ref.path, ref);
  for (const path of result.attachments ?? []) if (!seen.has(path)) seen.set(path, { path, name: path.split('/').pop() || path });
  return [...seen.values()];
}

/** `resource_link` content for the files a run produced (those under /attachments/). */
export function attachmentLinks(result: RunResult): ResourceLink[] {
  const links: ResourceLink[] = [];
  for (const file of producedFiles(result)) {
    const uri = attachmentUri(result.threadId, file.path);
    if (!uri) continue;
    links.push({
      type: 'resource_link',
      uri,
      name: file.name,
      ...(file.mimeType ? { mimeType: file.mimeType } : {}),
      ...(file.size !== undefined ? { size: file.size } : {}),
      ...(file.description ? { description: file.description } : {}),
    });
  }
  return links;
}
