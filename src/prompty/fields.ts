/**
 * Checking and normalizing the frontmatter fields of a `.prompty` file (everything but `inputs`,
 * see inputs.ts).
 */
import type { IssueCollector } from './errors.js';
import { fieldName, type ParsedFrontmatter } from './frontmatter.js';
import type { FieldPath } from './inputs.js';
import { checkModel } from './model.js';
import type { PromptyEngine, PromptyFields, PromptyModelObject } from './types.js';

/** Frontmatter keys with a meaning; any other key is reported as a warning. */
const KNOWN_FIELDS = new Set([
  'name',
  'description',
  'model',
  'inputs',
  'sample',
  'template',
  'outputs',
  'authors',
  'tags',
  'version',
  'metadata',
  'exposeAsTool',
  'toolChoice',
  'reasoning',
  'hooks',
  'tools',
  'includeChat',
  'includePastTools',
  'parallelToolCalls',
  'recentImageThreshold',
  'env',
  'variables',
  'alwaysLoad',
  'defer',
]);

const METADATA_FIELDS = ['authors', 'tags', 'version', 'metadata'] as const;
const BOOLEAN_FIELDS = ['exposeAsTool', 'includeChat', 'includePastTools', 'parallelToolCalls', 'alwaysLoad', 'defer'] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (isRecord(v)) return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

/** Reports problems at a field path, with its file line. */
export class FieldReporter {
  constructor(
    private readonly fm: ParsedFrontmatter | null,
    private readonly issues: IssueCollector,
  ) {}

  private where(path: FieldPath): { line?: number; field: string } {
    const line = this.fm?.lineOf(path);
    return { ...(line !== undefined ? { line } : {}), field: fieldName(path) };
  }

  error(path: FieldPath, message: string): void {
    this.issues.error({ ...this.where(path), message });
  }

  warn(path: FieldPath, message: string): void {
    this.issues.warn({ ...this.where(path), message });
  }

  /** The text written at `path` when it held a `${...}` construct. */
  rawOf(path: FieldPath): string | undefined {
    return this.fm?.rawOf(path);
  }

  /** Reports a wrong type: `expected <what>, got <value>`. */
  wrongType(path: FieldPath, expected: string, value: unknown): void {
    this.error(path, `expected ${expected}, got ${describeType(value)}`);
  }
}

/** The normalized non-input fields. */
export interface CheckedFields {
  name?: string;
  description?: string;
  model?: string | PromptyModelObject;
  /** The `template` engine when the file names one. */
  engine?: PromptyEngine;
  fields: PromptyFields;
  metadata: Record<string, unknown>;
}

const ENGINES: Record<string, PromptyEngine> = { mustache: 'mustache', jinja2: 'jinja2', jinja: 'jinja2' };

/** A format or parser given as a name or as Prompty 2's `{kind: name}`. */
function kindOf(v: unknown): unknown {
  return isRecord(v) && v['kind'] !== undefined ? v['kind'] : v;
}

/**
 * `template`: an engine name, or `{format, parser}` (`format` also as `type`; either as a name or
 * `{kind: name}`). Only the `prompty` parser exists.
 * @returns the engine, or undefined when the file names none (or a wrong one, reported)
 */
function checkTemplate(raw: unknown, r: FieldReporter): PromptyEngine | undefined {
  if (raw === undefined || raw === null) return undefined;
  let format: unknown = raw;
  let path: FieldPath = ['template'];
  if (isRecord(raw)) {
    for (const key of Object.keys(raw)) {
      if (!['format', 'type', 'parser'].includes(key)) r.warn(['template', key], `unknown template field "${key}" is ignored`);
    }
    const parser = kindOf(raw['parser']);
    if (parser !== undefined && parser !== 'prompty') {
      r.error(['template', 'parser'], `parser ${JSON.stringify(parser)} is not supported (only "prompty")`);
    }
    const key = raw['format'] !== undefined ? 'format' : 'type';
    if (raw[key] === undefined) return undefined;
    format = kindOf(raw[key]);
    path = ['template', key];
  }
  if (typeof format !== 'string') {
    r.wrongType(path, 'a template engine name ("mustache" or "jinja2")', format);
    return undefined;
  }
  const engine = ENGINES[format.trim().toLowerCase()];
  if (!engine) r.error(path, `unknown template engine "${format}" (use "mustache" or "jinja2")`);
  return engine;
}

function checkPassThrough(data: Record<string, unknown>, r: FieldReporter): PromptyFields {
  const fields: PromptyFields = {};
  for (const key of BOOLEAN_FIELDS) {
    const v = data[key];
    if (v === undefined) continue;
    if (typeof v === 'boolean') fields[key] = v;
    else r.wrongType([key], 'true or false', v);
  }
  const toolChoice = data['toolChoice'];
  if (toolChoice !== undefined) {
    if (toolChoice === 'auto' || toolChoice === 'none' || toolChoice === 'required') fields.toolChoice = toolChoice;
    else r.wrongType(['toolChoice'], 'one of auto, none, required', toolChoice);
  }
  const threshold = data['recentImageThreshold'];
  if (threshold !== undefined) {
    if (typeof threshold === 'number' && Number.isInteger(threshold) && threshold > 0) fields.recentImageThreshold = threshold;
    else r.wrongType(['recentImageThreshold'], 'a positive integer', threshold);
  }
  const reasoning = data['reasoning'];
  if (reasoning !== undefined) {
    if (!isRecord(reasoning)) r.wrongType(['reasoning'], 'a mapping', reasoning);
    else {
      const out: NonNullable<PromptyFields['reasoning']> = {};
      let ok = true;
      for (const [k, v] of Object.entries(reasoning)) {
        const bad = (expected: string): void => {
          ok = false;
          r.wrongType(['reasoning', k], expected, v);
        };
        if (k === 'effort') {
          if (v === 'low' || v === 'medium' || v === 'high') out.effort = v;
          else bad('one of low, medium, high');
        } else if (k === 'maxTokens') {
          if (typeof v === 'number' && Number.isInteger(v) && v > 0) out.maxTokens = v;
          else bad('a positive integer');
        } else if (k === 'exclude' || k === 'include') {
          if (typeof v === 'boolean') out[k] = v;
          else bad('true or false');
        } else {
          r.warn(['reasoning', k], `unknown reasoning field "${k}" is ignored`);
        }
      }
      if (ok) fields.reasoning = out;
    }
  }
  const hooks = data['hooks'];
  if (hooks !== undefined) {
    if (Array.isArray(hooks) && hooks.every((h) => typeof h === 'string' && h !== '')) fields.hooks = hooks as string[];
    else r.wrongType(['hooks'], 'a list of hook ids', hooks);
  }
  const tools = data['tools'];
  if (tools !== undefined) {
    if (!Array.isArray(tools)) r.wrongType(['tools'], 'a list of tool names or tool configs', tools);
    else {
      let ok = true;
      tools.forEach((t, i) => {
        const named = isRecord(t) && (typeof t['name'] === 'string' || typeof t['id'] === 'string');
        if (!(typeof t === 'string' && t !== '') && !named) {
          ok = false;
          r.wrongType(['tools', i], 'a tool name or a mapping with "name"', t);
        }
      });
      if (ok) fields.tools = tools as PromptyFields['tools'];
    }
  }
  const env = data['env'];
  if (env !== undefined) {
    if (!isRecord(env)) r.wrongType(['env'], 'a mapping of names to string values', env);
    else {
      let ok = true;
      for (const [k, v] of Object.entries(env)) {
        if (typeof v !== 'string') {
          ok = false;
          r.wrongType(['env', k], 'a string (quote numbers and booleans)', v);
        }
      }
      if (ok) fields.env = env as Record<string, string>;
    }
  }
  const variables = data['variables'];
  if (variables !== undefined) {
    if (!Array.isArray(variables)) r.wrongType(['variables'], 'a list of variable declarations', variables);
    // Every declaration as a TypeScript definition's: a secret that slipped through as text would reach the model.
    else if (variables.map((declaration, i) => checkVariable(declaration, i, r)).every(Boolean))
      fields.variables = variables as PromptyFields['variables'];
  }
  return fields;
}

const VARIABLE_KEYS = new Set(['name', 'type', 'required', 'scoped', 'description']);

/**
 * One `variables` entry: `{ name, type?: text | secret, required?, scoped?, description? }` (a missing
 * type is text, a missing `required` false). A value of the wrong kind is an error: `type: Secret` or
 * `required: "true"` read as something else would let a secret through as text, or run without it.
 */
function checkVariable(declaration: unknown, i: number, r: FieldReporter): boolean {
  const at = (key?: string): FieldPath => (key === undefined ? ['variables', i] : ['variables', i, key]);
  if (!isRecord(declaration)) {
    r.wrongType(at(), 'a variable declaration ({name, type, required, description})', declaration);
    return false;
  }
  let ok = true;
  const wrong = (key: string, expected: string) => {
    ok = false;
    r.wrongType(at(key), expected, declaration[key]);
  };
  const { name, type, required, scoped, description } = declaration;
  if (name === undefined) {
    ok = false;
    r.error(at('name'), 'name is required');
  } else if (typeof name !== 'string' || name.trim() === '') wrong('name', 'a non-empty string');
  if (type !== undefined && type !== 'text' && type !== 'secret') wrong('type', '"text" or "secret"');
  if (required !== undefined && typeof required !== 'boolean') wrong('required', 'true or false');
  if (scoped !== undefined && typeof scoped !== 'boolean') wrong('scoped', 'true or false');
  if (description !== undefined && typeof description !== 'string') wrong('description', 'a string');
  for (const key of Object.keys(declaration)) {
    if (!VARIABLE_KEYS.has(key))
      r.warn(at(key), `unknown field "${key}" of a variable is ignored (name, type, required, scoped, description)`);
  }
  return ok;
}

/** Checks every frontmatter field except `inputs`, `sample` and `outputs`; problems go to the reporter. */
export function checkFields(data: Record<string, unknown>, r: FieldReporter): CheckedFields {
  for (const key of Object.keys(data)) {
    if (!KNOWN_FIELDS.has(key)) r.warn([key], `unknown field "${key}" is ignored`);
  }
  const out: CheckedFields = { fields: checkPassThrough(data, r), metadata: {} };
  for (const key of METADATA_FIELDS) if (data[key] !== undefined) out.metadata[key] = data[key];

  const name = data['name'];
  if (name !== undefined) {
    if (typeof name === 'string' && name.trim() !== '') out.name = name.trim();
    else r.wrongType(['name'], 'a non-empty string', name);
  }
  const description = data['description'];
  if (description === undefined || description === null) {
    r.error(['description'], 'description is required (it is the tool description)');
  } else if (typeof description === 'string' && description.trim() !== '') {
    out.description = description.trim();
  } else {
    r.wrongType(['description'], 'a non-empty string', description);
  }
  const model = checkModel(data['model'], r);
  if (model !== undefined) out.model = model;
  const engine = checkTemplate(data['template'], r);
  if (engine !== undefined) out.engine = engine;
  return out;
}
