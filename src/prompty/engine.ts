/**
 * The template engines of a `.prompty` body: which one a file uses, the load-time syntax check,
 * and rendering with a call's values into text whose values and structure are tokens (see
 * interpolation.ts). Mustache is always loaded; nunjucks only for jinja2 files.
 */
import { instrument, lookupPath } from './instrument.js';
import { Interpolations, mustacheSyntaxError, renderWithTokens } from './interpolation.js';
import type { CompiledJinja } from './jinja.js';
import type { TemplateScan } from './sections.js';
import type { LoadedPrompty, PromptyEngine } from './types.js';

/** Jinja2 statement or comment tags: mustache has neither. */
const JINJA_TAG_RE = /\{%[\s\S]*?%\}|\{#[\s\S]*?#\}/;

/**
 * The engine of a body. A `template` field decides; without one, a body that uses Jinja2 statement
 * or comment tags (`{% for %}`, `{# ... #}`) is jinja2, the default of Prompty files, and any other
 * body is mustache (for `{{var}}` alone the two render the same).
 */
export function detectEngine(declared: PromptyEngine | undefined, body: string): PromptyEngine {
  if (declared) return declared;
  return JINJA_TAG_RE.test(body) ? 'jinja2' : 'mustache';
}

/** A template problem at a 0-based template line. */
export interface TemplateProblem {
  line?: number;
  message: string;
}

const compiled = new WeakMap<LoadedPrompty, CompiledJinja>();

async function compileFor(template: string, scan: TemplateScan, inputs: readonly string[], file: string) {
  const { compileJinja } = await import('./jinja.js');
  return compileJinja(template, scan, new Set(inputs), file);
}

/**
 * Checks a template's syntax (and, for jinja2, its sandbox rules).
 * @returns the problems, and for jinja2 the compiled template to keep with the loaded file
 */
export async function checkTemplate(
  engine: PromptyEngine,
  template: string,
  scan: TemplateScan,
  inputs: readonly string[],
  file: string,
): Promise<{ problems: TemplateProblem[]; jinja?: CompiledJinja }> {
  if (engine === 'jinja2') {
    const result = await compileFor(template, scan, inputs, file);
    return result.compiled ? { problems: [], jinja: result.compiled } : { problems: result.problems };
  }
  const syntax = mustacheSyntaxError(template);
  if (!syntax) return { problems: [] };
  const line = template.slice(0, syntax.offset).split('\n').length - 1;
  return { problems: [{ line, message: `mustache syntax: ${syntax.message}` }] };
}

/** Keeps the template compiled while loading, so the first call does not compile it again. */
export function rememberCompiled(p: LoadedPrompty, jinja: CompiledJinja | undefined): void {
  if (jinja) compiled.set(p, jinja);
}

/**
 * Renders the body with `view`: every interpolated value and every structure token belongs to the
 * returned `slots`.
 * @throws {AgentportError} `PROMPTY_RENDER` for a jinja2 render error (`data.templateLine`)
 */
export async function renderTemplate(
  p: LoadedPrompty,
  scan: TemplateScan,
  view: Record<string, unknown>,
): Promise<{ text: string; slots: Interpolations }> {
  if (p.engine === 'jinja2') {
    let jinja = compiled.get(p);
    if (!jinja) {
      const result = await compileFor(
        p.template,
        scan,
        p.inputs.map((i) => i.name),
        p.file,
      );
      // loadPromptyFile refuses a template that does not compile; this is a hand-made LoadedPrompty.
      if (!result.compiled) throw new Error(`${p.file}: ${result.problems[0]?.message ?? 'jinja2 template does not compile'}`);
      jinja = result.compiled;
      compiled.set(p, jinja);
    }
    const slots = new Interpolations(jinja.nonce);
    return { text: jinja.render(view, slots), slots };
  }
  const slots = new Interpolations();
  const source = instrument(p.template, scan, slots, (name) => slots.hole(lookupPath(view, name)));
  return { text: renderWithTokens(source, view, slots), slots };
}
