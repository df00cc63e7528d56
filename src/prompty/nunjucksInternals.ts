/**
 * Typed access to the parts of nunjucks that @types/nunjucks leaves out: the parser, the AST node
 * classes, the transformer and the compiler. jinja.ts compiles templates from a checked and
 * rewritten AST instead of from source, which is what makes the sandbox possible; the public API
 * only compiles source.
 *
 * Only what jinja.ts uses is declared. nunjucks is pinned (3.2.4), so these internals do not move
 * under us.
 */
import { createRequire } from 'node:module';
import nunjucks from 'nunjucks';

/** An AST node. `fields` names the properties holding children (NodeList: `children`). */
export interface NjNode {
  readonly typename: string;
  readonly fields: readonly string[];
  lineno: number;
  colno: number;
  [field: string]: unknown;
}

/** A node class: `new (lineno, colno, ...fields)`, and `instanceof` checks. */
export type NjNodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => NjNode;

/** The node classes jinja.ts builds or recognizes. */
export interface NjNodes {
  Node: NjNodeClass;
  NodeList: NjNodeClass;
  Output: NjNodeClass;
  TemplateData: NjNodeClass;
  Literal: NjNodeClass;
  Symbol: NjNodeClass;
  LookupVal: NjNodeClass;
  Filter: NjNodeClass;
  Include: NjNodeClass;
  Import: NjNodeClass;
  FromImport: NjNodeClass;
  Extends: NjNodeClass;
}

interface NjCompiler {
  compile(node: NjNode): void;
  getCode(): string;
}

interface Internals {
  parser: { parse(src: string, extensions: unknown[], opts: object): NjNode };
  compiler: { Compiler: new (name: string, throwOnUndefined: boolean) => NjCompiler };
  nodes: NjNodes;
}

// The package's default export carries parser, compiler and nodes; the types do not declare them.
const internals = nunjucks as unknown as Internals;
// The transformer is not re-exported by the package index.
const transformer = createRequire(import.meta.url)('nunjucks/src/transformer.js') as {
  transform(ast: NjNode, asyncFilters: string[], name: string): NjNode;
};

export const njNodes: NjNodes = internals.nodes;

/** Parses template source into its AST. @throws nunjucks' TemplateError on a syntax error */
export function parseTemplate(source: string): NjNode {
  return internals.parser.parse(source, [], {});
}

/**
 * Compiles an AST into the object nunjucks' `Template` takes as `{type: 'code', obj}` (what
 * `new Template(source)` does, minus the parsing).
 */
export function compileAst(ast: NjNode, name: string): Record<string, unknown> {
  const compiler = new internals.compiler.Compiler(name, false);
  compiler.compile(transformer.transform(ast, [], name));
  // nunjucks evaluates its generated code the same way; the code comes from our checked AST.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above: nunjucks' own way of loading compiled templates
  const factory = new Function(compiler.getCode()) as () => Record<string, unknown>;
  return factory();
}

export { nunjucks };
