/**
 * Rendering a loaded `.prompty` file into messages for one call.
 */
import { promptyError } from './errors.js';
import { Interpolations, renderWithTokens, toData } from './interpolation.js';
import { parseMarkerLine, type ParsedMarker } from './markers.js';
import { buildParts, isMediaError, tidyText } from './media.js';
import { PARAMS_RE } from './replacements.js';
import { groupSections, scanTemplate, sectionKind, type Section, type TemplateScan } from './sections.js';
import { isSectionError, parseSectionYaml, toolCallsFromYaml, toolsFromYaml } from './structured.js';
import type { LoadedPrompty, PromptyChatMessage, PromptyMessage, PromptyToolCall } from './types.js';

/** What one render produces. */
export interface PromptyRenderResult {
  /** Messages in template order; a `thread` item marks where the conversation history goes. */
  messages: PromptyMessage[];
  /** Tools hoisted from the body's `tools:` section (names or config objects), in order. */
  tools: Array<string | Record<string, unknown>>;
}

const scans = new WeakMap<LoadedPrompty, TemplateScan>();

/** The (cached) structural scan of a loaded file's template. */
export function templateScanOf(p: LoadedPrompty): TemplateScan {
  let scan = scans.get(p);
  if (!scan) {
    scan = scanTemplate(p.template);
    scans.set(p, scan);
  }
  return scan;
}

/**
 * The view a template is rendered with: the call's arguments as plain data, with each input's
 * `default` filled in where the argument is missing.
 */
export function renderView(p: LoadedPrompty, args: Record<string, unknown>): Record<string, unknown> {
  const view = (toData(args) ?? {}) as Record<string, unknown>;
  for (const input of p.inputs) {
    if (view[input.name] === undefined && input.default !== undefined) view[input.name] = input.default;
  }
  return view;
}

function lookupPath(view: Record<string, unknown>, name: string): unknown {
  let value: unknown = view;
  for (const key of name.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Adds structure tokens for the template's real markers and media links, and turns `${params:}` into value tokens. */
function instrument(template: string, scan: TemplateScan, slots: Interpolations, view: Record<string, unknown>): string {
  return template
    .split('\n')
    .map((line, i) => {
      let out = line;
      const links = scan.media.get(i);
      if (links) {
        for (const link of [...links].reverse()) {
          out = out.slice(0, link.start) + slots.mediaToken(i) + out.slice(link.start);
        }
      }
      if (scan.markerLines.has(i)) out = slots.markerToken(i) + out;
      if (out.includes('${params:')) {
        out = out.replace(PARAMS_RE, (_all, name: string) => slots.hole(lookupPath(view, name.trim())));
      }
      return out;
    })
    .join('\n');
}

interface RenderedHead {
  marker: ParsedMarker;
  /** 0-based template line of the marker. */
  line: number;
}

/**
 * Renders a loaded `.prompty` file with a call's arguments.
 *
 * Steps: `${params:name}` and mustache `{{...}}` are filled from `args` (no HTML escaping; values
 * are data and cannot create markers, media links or YAML structure), the result is split into
 * messages at the template's own markers, the `tools:` section is parsed and hoisted,
 * `assistant[type="tool_call"]` sections become tool calls, tool sections tool results, `thread`
 * markers thread items, and media links image/file parts (local files inlined as data: URLs).
 *
 * `args` should already be validated against `p.inputSchema`; missing inputs with a default get it.
 *
 * @throws {AgentportError} with code `PROMPTY_RENDER` and `data` {@link PromptyErrorData} (the file and
 *   the template line).
 */
export async function renderPrompty(p: LoadedPrompty, args: Record<string, unknown>): Promise<PromptyRenderResult> {
  const scan = templateScanOf(p);
  const slots = new Interpolations();
  const view = renderView(p, args);
  const rendered = renderWithTokens(instrument(p.template, scan, slots, view), view, slots);

  const fail = (line: number, message: string, field?: string): never => {
    const sourceLine = p.templateSourceLines[line];
    throw promptyError(
      p.file,
      [{ ...(sourceLine !== undefined ? { line: sourceLine } : {}), ...(field !== undefined ? { field } : {}), message }],
      'PROMPTY_RENDER',
    );
  };

  const markerRe = new RegExp(`^⟦${slots.nonce}m(\\d+)⟧(.*)$`);
  const sections = groupSections<RenderedHead>(rendered.split('\n'), (text) => {
    const m = markerRe.exec(text);
    if (!m) return null;
    const line = Number(m[1]);
    const parsed = parseMarkerLine(m[2] ?? '');
    if (parsed.kind !== 'marker') return fail(line, 'a role marker no longer parses after rendering');
    return { marker: parsed.marker, line };
  });

  const messages: PromptyMessage[] = [];
  const tools: PromptyRenderResult['tools'] = [];
  const pending: PromptyToolCall[] = [];
  const media = { file: p.file, agentsDir: p.agentsDir };

  const parts = async (section: Section<RenderedHead>, line: number): Promise<PromptyChatMessage['content']> => {
    try {
      return await buildParts(section.lines.join('\n'), slots, media);
    } catch (err) {
      if (isMediaError(err)) return fail(typeof err.data?.templateLine === 'number' ? err.data.templateLine : line, err.message, 'media');
      throw err;
    }
  };

  for (const [index, section] of sections.entries()) {
    const head = section.head;
    if (head === null) {
      const content = await parts(section, 0);
      if (content.length > 0) messages.push({ kind: 'message', role: 'system', attributes: {}, content });
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [k, v] of head.marker.attributes) attributes[k] = slots.fill(v);
    const kind = sectionKind(head.marker);
    const yamlText = (): string => slots.stripStructureTokens(section.lines.join('\n'));
    const yaml = (field: string): unknown => {
      try {
        return parseSectionYaml(yamlText(), slots);
      } catch (err) {
        if (isSectionError(err)) return fail(head.line, err.message, field);
        throw err;
      }
    };

    if (kind === 'tools') {
      const leading = sections[0] as Section<RenderedHead>;
      if (index !== 1 || tidyText(slots.fill(slots.stripStructureTokens(leading.lines.join('\n')))) !== '') {
        fail(head.line, 'the tools: section must come before the text prompt (first in the body)', 'tools');
      }
      try {
        tools.push(...toolsFromYaml(yaml('tools')));
      } catch (err) {
        if (isSectionError(err)) fail(head.line, err.message, 'tools');
        throw err;
      }
      continue;
    }
    if (kind === 'thread') {
      messages.push({ kind: 'thread', attributes });
      continue;
    }
    if (kind === 'tool_call') {
      let toolCalls: PromptyToolCall[] = [];
      try {
        toolCalls = toolCallsFromYaml(yaml('tool_call'));
      } catch (err) {
        if (isSectionError(err)) fail(head.line, err.message, 'tool_call');
        throw err;
      }
      pending.push(...toolCalls);
      const message: PromptyChatMessage = { kind: 'message', role: 'assistant', attributes, content: [], toolCalls };
      if (attributes['name'] !== undefined) message.name = attributes['name'];
      messages.push(message);
      continue;
    }

    const keyword = head.marker.keyword;
    const content = await parts(section, head.line);
    if (keyword === 'tool' || keyword === 'function') {
      const explicit = attributes['tool_call_id'];
      let call: PromptyToolCall | undefined;
      if (explicit !== undefined) {
        const at = pending.findIndex((c) => c.id === explicit);
        if (at !== -1) call = pending.splice(at, 1)[0];
      } else {
        call = pending.shift();
      }
      const toolCallId = explicit ?? call?.id;
      if (toolCallId === undefined) {
        fail(head.line, `a ${keyword} section needs tool_call_id="..." (no earlier tool call is left to answer)`, keyword);
      }
      const message: PromptyChatMessage = { kind: 'message', role: 'tool', attributes, content, toolCallId: toolCallId as string };
      const name = attributes['name'] ?? call?.name;
      if (name !== undefined) message.name = name;
      messages.push(message);
      continue;
    }
    const role = keyword === 'assistant' ? 'assistant' : keyword === 'user' ? 'user' : 'system';
    const message: PromptyChatMessage = { kind: 'message', role, attributes, content };
    if (attributes['name'] !== undefined) message.name = attributes['name'];
    messages.push(message);
  }
  return { messages, tools };
}
