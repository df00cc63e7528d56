/**
 * Rendering a loaded `.prompty` file into messages for one call.
 */
import { renderTemplate } from './engine.js';
import { promptyError } from './errors.js';
import { toData, type Interpolations } from './interpolation.js';
import { parseMarkerLine, type ParsedMarker } from './markers.js';
import { buildParts, isMediaError } from './media.js';
import { groupSections, sectionKind, templateScanOf, type Section } from './sections.js';
import { normalizeRenderedTools, type PromptyToolEntry } from './sectionTools.js';
import { isSectionError, parseSectionYaml, toolCallsFromYaml, toolsFromYaml } from './structured.js';
import { isTemplateRenderError } from './templateError.js';
import type { LoadedPrompty, PromptyChatMessage, PromptyMessage, PromptyToolCall } from './types.js';

/** What one render produces. */
export interface PromptyRenderResult {
  /** Messages in template order; a `thread` item marks where the conversation history goes. */
  messages: PromptyMessage[];
  /**
   * Tools hoisted from the body's `tools:` section, in order: names, or config objects as written
   * (an `{id, type, options}` entry also gets `name: <id>`). Entries in `p.skipTools` are left out.
   */
  tools: PromptyToolEntry[];
}

/**
 * The view a template is rendered with: the call's arguments as plain data, with each input's
 * `default` (from its declaration or from `sample`) filled in where the argument is missing.
 */
function renderView(p: LoadedPrompty, args: Record<string, unknown>): Record<string, unknown> {
  const view = (toData(args) ?? {}) as Record<string, unknown>;
  for (const input of p.inputs) {
    if (view[input.name] === undefined && input.default !== undefined) view[input.name] = input.default;
  }
  return view;
}

interface RenderedHead {
  marker: ParsedMarker;
  /** 0-based template line of the marker. */
  line: number;
}

/** How much of the template a render turns into output. */
interface RenderOptions {
  /** Only the `tools:` section: no messages, no media read. */
  toolsOnly?: boolean;
}

/**
 * Renders a loaded `.prompty` file with a call's arguments.
 *
 * Steps: `${params:name}` and the template's `{{...}}` are filled from `args` (mustache or jinja2,
 * no HTML escaping; values are data and cannot create markers, media links or YAML structure), the
 * result is split into messages at the template's own markers, the `tools:` section is parsed and
 * hoisted, `assistant[type="tool_call"]` sections become tool calls, tool sections tool results,
 * `thread` markers thread items, and media links image/file parts (local files inlined as data:
 * URLs). Each message's text loses the newlines at its edges and nothing else.
 *
 * `args` should already be validated against `p.inputSchema`; missing inputs with a default get it.
 *
 * @throws {AgentportError} with code `PROMPTY_RENDER` and `data` {@link PromptyErrorData} (the file and
 *   the template line).
 */
export async function renderPrompty(p: LoadedPrompty, args: Record<string, unknown>): Promise<PromptyRenderResult> {
  return render(p, args, {});
}

/**
 * The tools of the body's `tools:` section for a call's arguments, without building any message
 * (for tools that read their rendered `options` when they run).
 * @throws {AgentportError} `PROMPTY_RENDER`, as {@link renderPrompty}
 */
export async function renderPromptyTools(p: LoadedPrompty, args: Record<string, unknown>): Promise<PromptyToolEntry[]> {
  return (await render(p, args, { toolsOnly: true })).tools;
}

async function render(p: LoadedPrompty, args: Record<string, unknown>, options: RenderOptions): Promise<PromptyRenderResult> {
  const fail = (line: number | undefined, message: string, field?: string): never => {
    const sourceLine = line === undefined ? undefined : p.templateSourceLines[line];
    throw promptyError(
      p.file,
      [{ ...(sourceLine !== undefined ? { line: sourceLine } : {}), ...(field !== undefined ? { field } : {}), message }],
      'PROMPTY_RENDER',
    );
  };

  const scan = templateScanOf(p);
  let rendered: string;
  let slots: Interpolations;
  try {
    ({ text: rendered, slots } = await renderTemplate(p, scan, renderView(p, args)));
  } catch (err) {
    if (isTemplateRenderError(err)) {
      const line = err.data?.templateLine;
      return fail(typeof line === 'number' ? line : undefined, err.message, 'template');
    }
    throw err;
  }

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
    const kind = sectionKind(head?.marker ?? null);
    if (options.toolsOnly && kind !== 'tools') continue;
    if (head === null) {
      const content = await parts(section, 0);
      // Blank text before the first marker is no message.
      if (content.some((part) => part.type !== 'text' || part.text.trim() !== '')) {
        messages.push({ kind: 'message', role: 'system', attributes: {}, content });
      }
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [k, v] of head.marker.attributes) attributes[k] = slots.fill(v);
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
      if (index !== 1 || slots.fill(slots.stripStructureTokens(leading.lines.join('\n'))).trim() !== '') {
        fail(head.line, 'the tools: section must come before the text prompt (first in the body)', 'tools');
      }
      try {
        tools.push(...normalizeRenderedTools(toolsFromYaml(yaml('tools')), p.skipTools));
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
      let toolCalls: PromptyToolCall[];
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
      const message: PromptyChatMessage = { kind: 'message', role: 'tool', attributes, content, toolCallId: toolCallId };
      const name = attributes['name'] ?? call?.name;
      if (name !== undefined) message.name = name;
      messages.push(message);
      continue;
    }
    const role = keyword === 'assistant' ? 'assistant' : keyword === 'user' ? 'user' : 'system';
    const message: PromptyChatMessage = { kind: 'message', role, attributes, content };
    if (keyword === 'developer') message.declaredRole = 'developer';
    if (attributes['name'] !== undefined) message.name = attributes['name'];
    messages.push(message);
  }
  return { messages, tools };
}
