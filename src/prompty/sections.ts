/**
 * Splitting a body into sections (one per marker) and the static scan of a template: where its
 * real markers and media links are, and which structural rules it breaks.
 */
import { findMediaLinks, parseMarkerLine, type MediaLink, type ParsedMarker } from './markers.js';
import type { LoadedPrompty } from './types.js';

/** How a section's content is treated. */
export type SectionKind = 'text' | 'tools' | 'tool_call' | 'thread';

/** The kind of section a marker opens (`null`: text before the first marker, a system message). */
export function sectionKind(marker: ParsedMarker | null): SectionKind {
  if (marker === null) return 'text';
  if (marker.keyword === 'tools') return 'tools';
  if (marker.keyword === 'thread') return 'thread';
  if (marker.keyword === 'assistant' && marker.attributes.some(([k, v]) => k === 'type' && v === 'tool_call')) {
    return 'tool_call';
  }
  return 'text';
}

/** A run of lines opened by a marker (or the leading run before any marker). */
export interface Section<H> {
  /** What the detector returned for the opening line; `null` for the leading run. */
  head: H | null;
  /** Index of the opening line (of the first line for the leading run). */
  start: number;
  /** Content lines, without the marker line. */
  lines: string[];
}

/**
 * Groups `lines` into sections at every line for which `detect` returns a head; `detect` also gets
 * the head of the section the line would otherwise belong to.
 */
export function groupSections<H>(lines: string[], detect: (line: string, index: number, current: H | null) => H | null): Array<Section<H>> {
  const sections: Array<Section<H>> = [{ head: null, start: 0, lines: [] }];
  lines.forEach((line, index) => {
    const current = sections[sections.length - 1] as Section<H>;
    const head = detect(line, index, current.head);
    if (head !== null) sections.push({ head, start: index, lines: [] });
    else current.lines.push(line);
  });
  return sections;
}

function indentOf(line: string): number {
  return /^[ \t]*/.exec(line)?.[0].length ?? 0;
}

/**
 * Inside a YAML section, a bare keyword line followed by a more indented line is a YAML key
 * (`function:` in a tool call), not a marker.
 */
function isYamlKey(lines: string[], index: number, marker: ParsedMarker): boolean {
  if (marker.attributes.length > 0 || /\[/.test(lines[index] ?? '')) return false;
  for (let i = index + 1; i < lines.length; i += 1) {
    const next = lines[i] as string;
    if (next.trim() === '') continue;
    return indentOf(next) > indentOf(lines[index] ?? '');
  }
  return false;
}

/**
 * True when `text` holds nothing but whitespace and template tags (mustache comments and section
 * tags, jinja2 statements and comments).
 */
function isBlankTemplateText(text: string): boolean {
  return text.replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/g, '').trim() === '';
}

/** A structural problem in a template, by 0-based template line. */
interface ScanProblem {
  line: number;
  field: string;
  message: string;
  severity: 'error' | 'warning';
}

/** What render and load need to know about a template's structure. */
export interface TemplateScan {
  /** Sections in order; the first is the (possibly empty) leading run. */
  sections: Array<Section<ParsedMarker>>;
  /** 0-based lines holding a real marker. */
  markerLines: Set<number>;
  /** Media links in text sections, by 0-based line. */
  media: Map<number, MediaLink[]>;
  problems: ScanProblem[];
}

/**
 * Scans a template (before rendering). Markers must be written literally on their own line: a line
 * produced by a variable is never a marker. The `tools:` section must be the first thing in the body.
 */
export function scanTemplate(template: string): TemplateScan {
  const lines = template.split('\n');
  const problems: ScanProblem[] = [];
  const markerLines = new Set<number>();
  const sections = groupSections<ParsedMarker>(lines, (line, index, current) => {
    const parsed = parseMarkerLine(line);
    if (parsed.kind === 'error') {
      problems.push({ line: index, field: 'marker', message: parsed.error, severity: 'error' });
      return null;
    }
    if (parsed.kind === 'none') return null;
    const inYaml = current !== null && sectionKind(current) !== 'text' && sectionKind(current) !== 'thread';
    if (inYaml && isYamlKey(lines, index, parsed.marker)) return null;
    markerLines.add(index);
    return parsed.marker;
  });

  const media = new Map<number, MediaLink[]>();
  sections.forEach((section, i) => {
    const kind = sectionKind(section.head);
    const first = section.head === null ? section.start : section.start + 1;
    if (kind === 'tools') {
      const precededByText = i > 1 || !isBlankTemplateText((sections[0] as Section<ParsedMarker>).lines.join('\n'));
      if (precededByText) {
        problems.push({
          line: section.start,
          field: 'tools',
          message: 'the tools: section must come before the text prompt (first in the body)',
          severity: 'error',
        });
      }
    }
    if (kind === 'thread' && !isBlankTemplateText(section.lines.join('\n'))) {
      problems.push({
        line: section.start,
        field: 'thread',
        message: 'text after a thread marker is ignored; start a role section (e.g. "user:") for it',
        severity: 'warning',
      });
    }
    if (kind !== 'text') return;
    section.lines.forEach((line, j) => {
      if (!line.includes('![')) return;
      const links = findMediaLinks(line);
      if (links.length > 0) media.set(first + j, links);
    });
  });
  return { sections, markerLines, media, problems };
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
