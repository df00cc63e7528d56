/**
 * `template: jinja2`: sandboxed nunjucks with the same injection protection as mustache.
 *
 * The template is instrumented once (marker and media tokens, `${params:}` placeholders; see
 * instrument.ts), parsed, checked and rewritten as an AST, and compiled once:
 * - every `{{ expr }}` outputs a value token instead of the value (values are data, never text the
 *   parser splits or a template that is rendered again); the output of a macro or `caller()` passes
 *   through as it is, since it is template text with its own tokens;
 * - a filter applied to template output (`{% filter upper %}...`) works on the filled-in text, and
 *   its result is a value;
 * - `a.b` / `a[k]` go through jinjaLookup.ts (data only, no prototype walk);
 * - `include`, `import`, `from` and `extends` are refused (no loader, no files), and so are names
 *   that only exist on JavaScript's Object prototype (`constructor`, `__proto__`, ...).
 * The environment has no loader, autoescape is off, and the only globals are Jinja's own `range`,
 * `cycler` and `joiner`, next to the inputs.
 */
import { randomBytes } from 'node:crypto';
import type { Template } from 'nunjucks';
import type { AgentportError } from '../errors.js';
import { instrument, lookupPath } from './instrument.js';
import { Interpolations, valueText } from './interpolation.js';
import { safeLookup } from './jinjaLookup.js';
import { compileAst, njNodes as N, nunjucks, parseTemplate, type NjNode, type NjNodeClass } from './nunjucksInternals.js';
import type { TemplateScan } from './sections.js';
import { templateRenderError as renderError } from './templateError.js';

const HOLE = '__agentport_hole';
const FILL = '__agentport_fill';
const GET = '__agentport_get';

/** A problem found while compiling, at a 0-based template line when known. */
export interface JinjaProblem {
  line?: number;
  message: string;
}

/** A compiled jinja2 body, rendered once per call. */
export interface CompiledJinja {
  /** The nonce of this template's structure tokens; each render's Interpolations uses it. */
  readonly nonce: string;
  /**
   * Renders with `view`; values become tokens of `slots` (which must use {@link nonce}).
   * @throws {AgentportError} `PROMPTY_RENDER` with `data.templateLine` (see templateError.ts)
   */
  render(view: Record<string, unknown>, slots: Interpolations): string;
}

function isNode(value: unknown): value is NjNode {
  return value instanceof N.Node;
}

/**
 * `node instanceof cls`, without narrowing: every node class has the same TypeScript type, so a
 * narrowing check would turn the next check's `node` into `never`.
 */
function is(node: NjNode, cls: NjNodeClass): boolean {
  return node instanceof cls;
}

/** Rewrites the tree bottom-up: `fn` gets each node after its children were rewritten. */
function rewrite(node: NjNode, fn: (n: NjNode) => NjNode): NjNode {
  if (is(node, N.NodeList)) {
    node['children'] = (node['children'] as unknown[]).map((c) => (isNode(c) ? rewrite(c, fn) : c));
  } else {
    for (const field of node.fields) {
      const child = node[field];
      if (isNode(child)) node[field] = rewrite(child, fn);
    }
  }
  return fn(node);
}

function call(filter: string, at: NjNode, args: NjNode[]): NjNode {
  return new N.Filter(at.lineno, at.colno, new N.Symbol(at.lineno, at.colno, filter), new N.NodeList(at.lineno, at.colno, args));
}

/** Names a template may not use: they reach JavaScript internals, not data. */
function isPrototypeName(name: string): boolean {
  return name in Object.prototype || name === 'prototype';
}

/** Checks the parsed template against the sandbox and rewrites it (see the module comment). */
function sandbox(ast: NjNode, nonce: string, declared: ReadonlySet<string>, problems: JinjaProblem[]): NjNode {
  const tokenRe = new RegExp(`⟦${nonce}[mip]\\d+⟧`, 'g');
  const seen = new Set<string>();
  const refuse = (node: NjNode, message: string): void => {
    // `"".constructor.constructor` is one problem, not two.
    if (seen.has(`${node.lineno}:${message}`)) return;
    seen.add(`${node.lineno}:${message}`);
    problems.push({ line: node.lineno, message });
  };
  return rewrite(ast, (node) => {
    if (is(node, N.Include) || is(node, N.Import) || is(node, N.FromImport) || is(node, N.Extends)) {
      refuse(
        node,
        `{% ${node.typename === 'FromImport' ? 'from' : node.typename.toLowerCase()} %} is not allowed: a template cannot read other files`,
      );
      return node;
    }
    if (is(node, N.Symbol)) {
      const name = String(node['value']);
      if (isPrototypeName(name) && !declared.has(name)) refuse(node, `"${name}" is not available in templates`);
      return node;
    }
    if (is(node, N.TemplateData)) return node;
    if (is(node, N.Literal)) {
      // Structure written inside an expression's string is text, not structure.
      const value = node['value'];
      if (typeof value === 'string') node['value'] = value.replace(tokenRe, '');
      return node;
    }
    if (is(node, N.LookupVal)) {
      const key = node['val'] as NjNode;
      const literal = is(key, N.Literal) ? key['value'] : undefined;
      if (typeof literal === 'string' && isPrototypeName(literal)) refuse(node, `".${literal}" is not available in templates`);
      return call(GET, node, [node['target'] as NjNode, key]);
    }
    if (is(node, N.Filter)) {
      const args = node['args'] as NjNode;
      const children = args['children'] as NjNode[];
      const first = children[0];
      if (first) children[0] = call(FILL, first, [first]);
      return node;
    }
    if (is(node, N.Output)) {
      node['children'] = (node['children'] as NjNode[]).map((c) => (is(c, N.TemplateData) ? c : call(HOLE, c, [c])));
      return node;
    }
    return node;
  });
}

/** nunjucks reports render errors as `(name) [Line L, Column C]\n  Error: message`, L 0-based. */
function fromNunjucksError(err: unknown): AgentportError {
  const raw = err instanceof Error ? err.message : String(err);
  const m = /\[Line (\d+), Column \d+\]\s*\n\s*(?:\w*Error: )?([\s\S]*)$/.exec(raw);
  if (!m) return renderError(`jinja2: ${raw}`);
  return renderError(`jinja2: ${(m[2] ?? raw).trim()}`, Number(m[1]));
}

class SandboxedTemplate implements CompiledJinja {
  private active: { slots: Interpolations; view: Record<string, unknown> } | null = null;
  private readonly template: Template;

  constructor(
    readonly nonce: string,
    private readonly params: readonly string[],
    code: Record<string, unknown>,
    name: string,
  ) {
    const env = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: false });
    env.addFilter(HOLE, (value: unknown) => this.hole(value));
    env.addFilter(FILL, (value: unknown) => this.fillCaptured(value));
    env.addFilter(GET, (target: unknown, key: unknown) => safeLookup(target, key));
    // Jinja2's tojson, which Prompty templates use; nunjucks only has `dump`.
    env.addFilter(
      'tojson',
      (value: unknown, indent?: unknown) => JSON.stringify(value, null, typeof indent === 'number' ? indent : undefined) ?? '',
    );
    // @types/nunjucks only declares a string source; a `{type: 'code'}` object is the precompiled form.
    this.template = new nunjucks.Template({ type: 'code', obj: code } as unknown as string, env, name, true);
  }

  private state(): { slots: Interpolations; view: Record<string, unknown> } {
    if (!this.active) throw new Error('jinja2 template used outside render()');
    return this.active;
  }

  /** `{{ expr }}`: a value token; macro and caller output (template text) passes through. */
  private hole(value: unknown): string {
    const { slots } = this.state();
    if (value === undefined || value === null) return '';
    if (value instanceof nunjucks.runtime.SafeString) {
      const text = value.toString();
      if (slots.hasTokens(text)) return text;
      return slots.hole(text);
    }
    if (typeof value === 'string' && slots.hasTokens(value)) return slots.hole(this.fillCaptured(value));
    return slots.hole(value);
  }

  /** Template output handed to a filter or mixed with other values: its text, with values filled in. */
  private fillCaptured(value: unknown): unknown {
    const { slots, view } = this.state();
    const text = value instanceof nunjucks.runtime.SafeString ? value.toString() : value;
    if (typeof text !== 'string' || !slots.hasTokens(text)) return value;
    const withParams = text.replace(new RegExp(`⟦${this.nonce}p(\\d+)⟧`, 'g'), (_all, k: string) =>
      valueText(lookupPath(view, this.params[Number(k)] ?? '')),
    );
    return slots.fill(slots.stripStructureTokens(withParams));
  }

  render(view: Record<string, unknown>, slots: Interpolations): string {
    if (slots.nonce !== this.nonce) throw new Error('jinja2 render with a foreign nonce');
    this.active = { slots, view };
    let text: string;
    try {
      // Synchronous: no async filters or loaders exist, so `active` cannot leak into another render.
      text = this.template.render(view);
    } catch (err) {
      throw fromNunjucksError(err);
    } finally {
      this.active = null;
    }
    return text.replace(new RegExp(`⟦${this.nonce}p(\\d+)⟧`, 'g'), (_all, k: string) =>
      slots.hole(lookupPath(view, this.params[Number(k)] ?? '')),
    );
  }
}

/**
 * Compiles a jinja2 body. `declared` are the input names (an input may be called `constructor`).
 * @returns the compiled template, or the problems that prevent it (0-based template lines)
 */
export function compileJinja(
  template: string,
  scan: TemplateScan,
  declared: ReadonlySet<string>,
  name: string,
): { compiled: CompiledJinja; problems: [] } | { compiled?: undefined; problems: JinjaProblem[] } {
  const nonce = randomBytes(9).toString('hex');
  const slots = new Interpolations(nonce);
  const params: string[] = [];
  const source = instrument(template, scan, slots, (param) => {
    params.push(param);
    return slots.paramToken(params.length - 1);
  });
  let ast: NjNode;
  try {
    ast = parseTemplate(source);
  } catch (err) {
    const e = err as { message?: string; lineno?: number };
    const message = `jinja2 syntax: ${(e.message ?? String(err)).replace(/^\(.*?\)\s*/, '').split('\n')[0]}`;
    // Parse errors carry a 1-based line; an error at the end of the template carries none.
    const line = typeof e.lineno === 'number' ? e.lineno - 1 : template.split('\n').length - 1;
    return { problems: [{ line, message }] };
  }
  const problems: JinjaProblem[] = [];
  const checked = sandbox(ast, nonce, declared, problems);
  if (problems.length > 0) return { problems };
  try {
    return { compiled: new SandboxedTemplate(nonce, params, compileAst(checked, name), name), problems: [] };
  } catch (err) {
    return { problems: [{ message: `jinja2: ${err instanceof Error ? err.message : String(err)}` }] };
  }
}
