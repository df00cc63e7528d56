/**
 * Marking a template's own structure before it is rendered: every real marker line and media link
 * (found by the scan of the template as written) gets a private token, and every `${params:}` is
 * replaced. Only marked structure counts after rendering, so rendered input can never add any.
 */
import type { Interpolations } from './interpolation.js';
import { PARAMS_RE } from './replacements.js';
import type { TemplateScan } from './sections.js';

/**
 * Adds structure tokens for the template's real markers and media links; each `${params:name}` is
 * replaced by what `param(name)` returns (a value token, or a placeholder resolved later).
 */
export function instrument(template: string, scan: TemplateScan, slots: Interpolations, param: (name: string) => string): string {
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
      if (out.includes('${params:')) out = out.replace(PARAMS_RE, (_all, name: string) => param(name.trim()));
      return out;
    })
    .join('\n');
}

/** The value at a dotted path (`limits.words`) of the render's view; undefined when absent. */
export function lookupPath(view: Record<string, unknown>, name: string): unknown {
  let value: unknown = view;
  for (const key of name.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    if (!Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
