/**
 * An upstream tool result as the runtime keeps tool results: text for the
 * model, and files (images, audio, embedded binary resources) as attachments
 * stored in the thread (see docs/runtime.md: images a tool returns are shown
 * to the model after its result). Resource links stay links: their URI and
 * name are written in the text, nothing is fetched.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ToolAttachment } from '../definitions/types.js';
import { isPlainFileName } from '../store/paths.js';

export interface UpstreamContent {
  text: string;
  attachments: ToolAttachment[];
  isError: boolean;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
  'application/json': 'json',
  'text/plain': 'txt',
};

/** @param baseName file names of attachments start with this (the tool's name) */
export function convertUpstreamContent(result: CallToolResult, baseName: string): UpstreamContent {
  const parts: string[] = [];
  const attachments: ToolAttachment[] = [];
  const file = (data: string, mimeType: string, name?: string) => {
    const extension = EXTENSIONS[mimeType] ?? mimeType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') ?? 'bin';
    attachments.push({ name: safeName(name) ?? `${baseName}-${attachments.length + 1}.${extension}`, mimeType, data });
  };
  for (const block of (result.content ?? []) as Array<Record<string, unknown>>) {
    switch (block.type) {
      case 'text':
        parts.push(typeof block.text === 'string' ? block.text : '');
        break;
      case 'image':
      case 'audio':
        if (typeof block.data === 'string' && typeof block.mimeType === 'string') file(block.data, block.mimeType);
        break;
      case 'resource_link':
        parts.push(linkLine(block));
        break;
      case 'resource': {
        const resource = (block.resource ?? {}) as Record<string, unknown>;
        const uri = typeof resource.uri === 'string' ? resource.uri : '';
        if (typeof resource.text === 'string') parts.push(`Resource ${uri}:\n${resource.text}`);
        else if (typeof resource.blob === 'string') {
          file(
            resource.blob,
            typeof resource.mimeType === 'string' ? resource.mimeType : 'application/octet-stream',
            uri.split(/[\\/]/).pop(),
          );
          parts.push(`Resource ${uri} (attached)`);
        }
        break;
      }
      default:
        parts.push(JSON.stringify(block));
    }
  }
  let text = parts.join('\n');
  if (!text && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (!text && attachments.length === 0) text = result.isError ? 'the tool failed without saying why' : '(the tool returned no content)';
  return { text, attachments, isError: result.isError === true };
}

function linkLine(block: Record<string, unknown>): string {
  const uri = typeof block.uri === 'string' ? block.uri : '';
  const name = typeof block.name === 'string' ? block.name : uri;
  const details = [
    typeof block.mimeType === 'string' ? block.mimeType : undefined,
    typeof block.description === 'string' ? block.description : undefined,
  ].filter(Boolean);
  return `Resource link: ${name} <${uri}>${details.length ? ` (${details.join('; ')})` : ''}`;
}

/** A file name that is one (no path, no control characters), or undefined. */
function safeName(name: string | undefined): string | undefined {
  return name !== undefined && isPlainFileName(name) ? name : undefined;
}
