/**
 * Media links in message text: `![image](url)`, `![file](url)`, `![type="image", detail="high"](url)`.
 *
 * http(s) and `data:` URLs are kept as they are. A local path (only when written literally in the
 * template) is read relative to the `.prompty` file, confined to the agents folder, and inlined as a
 * `data:` URL. A URL that comes from input must be http(s) or `data:`.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { AgentportError, hasCode } from '../errors.js';
import type { Interpolations } from './interpolation.js';
import { findMediaLinks, type MediaLink } from './markers.js';
import { mimeTypeOf, resolveConfined } from './paths.js';
import type { PromptyPart } from './types.js';

/** Largest local media file inlined as a data: URL. */
const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

/** Where local media paths are resolved. */
export interface MediaContext {
  file: string;
  agentsDir: string;
}

/**
 * A media link that cannot be used: code `PROMPTY_RENDER`, `data.field` `media` and, once known,
 * `data.templateLine` (the link's 0-based template line). The message names the URL and the reason.
 * renderPrompty turns it into the file's error with the file line.
 */
function mediaError(message: string, templateLine?: number): AgentportError {
  return new AgentportError('PROMPTY_RENDER', message, { field: 'media', ...(templateLine !== undefined ? { templateLine } : {}) });
}

/** True for an error made by {@link mediaError}. */
export function isMediaError(err: unknown): err is AgentportError {
  return hasCode(err, 'PROMPTY_RENDER') && err.data?.field === 'media' && err.data.file === undefined;
}

const REMOTE_RE = /^(https?:\/\/|data:)/i;
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:/i;

function localRef(url: string): string {
  if (!url.includes('%')) return url;
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

/**
 * Checks a literal (template-written) media URL at load time without reading the file.
 * @returns an error message, or null when the URL is usable.
 */
export async function checkLiteralMediaUrl(url: string, ctx: MediaContext): Promise<string | null> {
  if (REMOTE_RE.test(url)) return null;
  if (SCHEME_RE.test(url) && !path.isAbsolute(url)) {
    return `media link "${url}": only http(s), data: URLs and local paths are supported`;
  }
  try {
    await resolveConfined(localRef(url), path.dirname(ctx.file), ctx.agentsDir);
    return null;
  } catch (err) {
    if (hasCode(err, 'INVALID_PATH')) return `media link: ${err.message}`;
    throw err;
  }
}

/**
 * The URL to send for a media link. `fromInput` is true when any part of the URL was interpolated.
 * @throws {AgentportError} `PROMPTY_RENDER` (see {@link mediaError})
 */
async function resolveMediaUrl(url: string, fromInput: boolean, ctx: MediaContext): Promise<string> {
  if (REMOTE_RE.test(url)) return url;
  if (fromInput) {
    throw mediaError('a media URL built from input must be an http(s) or data: URL; local paths must be written in the template');
  }
  const problem = await checkLiteralMediaUrl(url, ctx);
  if (problem !== null) throw mediaError(problem);
  const real = await resolveConfined(localRef(url), path.dirname(ctx.file), ctx.agentsDir);
  const info = await stat(real);
  if (!info.isFile()) throw mediaError(`media link "${url}" is not a file`);
  if (info.size > MAX_MEDIA_BYTES) throw mediaError(`media file "${url}" is larger than ${MAX_MEDIA_BYTES} bytes`);
  const data = await readFile(real);
  return `data:${mimeTypeOf(real)};base64,${data.toString('base64')}`;
}

/** The part type and attributes a link stands for, with value tokens filled in. */
function mediaKind(link: MediaLink, slots: Interpolations): { type: 'image' | 'file'; attributes: Record<string, string> } {
  if (link.attributes) {
    const attributes: Record<string, string> = {};
    for (const [k, v] of link.attributes) attributes[k] = slots.fill(v);
    const type = attributes['type'];
    return { type: type === undefined || type === 'image' ? 'image' : 'file', attributes };
  }
  const label = slots.fill(link.label ?? '').trim();
  if (label === '' || label.toLowerCase() === 'image') return { type: 'image', attributes: {} };
  if (label.toLowerCase() === 'file') return { type: 'file', attributes: {} };
  // Ordinary markdown alt text: an image, as in Prompty.
  return { type: 'image', attributes: { alt: label } };
}

/**
 * Strips the newlines at both ends of a message's text and nothing else: spaces and indentation
 * stay, as Prompty's parse vectors expect ("  Hello  " stays "  Hello  ").
 */
function trimNewlines(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === '\n') start += 1;
  while (end > start && text[end - 1] === '\n') end -= 1;
  return text.slice(start, end);
}

/**
 * Builds the content parts of a text section. `text` is rendered text with structure tokens; only
 * links preceded by a media token (written in the template) become media parts. Whitespace next to
 * a media link is dropped; the message's text keeps its inner layout and loses only the newlines at
 * its start and end.
 * @throws {AgentportError} `PROMPTY_RENDER` (see {@link mediaError})
 */
export async function buildParts(text: string, slots: Interpolations, ctx: MediaContext): Promise<PromptyPart[]> {
  const pieces: Array<string | Exclude<PromptyPart, { type: 'text' }>> = [];
  const tokenRe = new RegExp(`⟦${slots.nonce}i(\\d+)⟧`, 'g');
  let last = 0;
  for (const m of text.matchAll(tokenRe)) {
    const after = m.index + m[0].length;
    const lineEnd = text.indexOf('\n', after);
    const rest = text.slice(after, lineEnd === -1 ? text.length : lineEnd);
    const link = findMediaLinks(rest)[0];
    if (!link || link.start !== 0) continue;
    pieces.push(text.slice(last, m.index));
    const { type, attributes } = mediaKind(link, slots);
    let url: string;
    try {
      url = await resolveMediaUrl(slots.fill(link.url).trim(), slots.hasHoles(link.url), ctx);
    } catch (err) {
      if (isMediaError(err)) throw mediaError(err.message, Number(m[1]));
      throw err;
    }
    pieces.push({ type, url, attributes });
    last = after + link.end;
  }
  pieces.push(text.slice(last));

  const parts: PromptyPart[] = [];
  const lastPiece = pieces.length - 1;
  pieces.forEach((piece, i) => {
    if (typeof piece !== 'string') {
      parts.push(piece);
      return;
    }
    let t = slots.fill(slots.stripStructureTokens(piece));
    // The message's own edges lose only newlines; the sides of a media link lose all whitespace.
    t = i === 0 ? t : t.trimStart();
    t = i === lastPiece ? t : t.trimEnd();
    if (i === 0 || i === lastPiece) t = trimNewlines(t);
    if (t !== '') parts.push({ type: 'text', text: t });
  });
  return parts;
}
