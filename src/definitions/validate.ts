/**
 * Validates one definition against its schema and reports problems as
 * {@link LoadIssue}s naming the file, the definition and the field.
 *
 * zod 4 issues do not carry the value that failed, so every message is built
 * from the value found at the issue's path in the definition itself: a field
 * is "required" only when it is absent (or undefined); a field of the wrong
 * type is reported as such, naming the expected type and what was given.
 * Unknown keys (zod's `unrecognized_keys`, the schemas being strict) are
 * warnings, never errors; so are fields that are accepted but not acted on.
 */
import type { z } from 'zod';
import type { DefinitionKind } from './brand.js';
import { describeValue, fieldPath, suggestName, type LoadIssue } from './issues.js';
import { definitionSchemas } from './schemas.js';
import type { AgentDefinition, AgentSide } from './types.js';

export interface ValidationOutcome {
  /** False when an error was found; warnings alone keep it true. */
  ok: boolean;
  issues: LoadIssue[];
}

export function validateDefinition(
  kind: DefinitionKind,
  value: unknown,
  file: string,
  definitionName: string | undefined,
): ValidationOutcome {
  const where = { file, ...(definitionName !== undefined ? { definition: definitionName } : {}) };
  if (typeof value !== 'object' || value === null) {
    return {
      ok: false,
      issues: [
        {
          severity: 'error',
          ...where,
          message: `expected ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} definition object, got ${describeValue(value)}`,
        },
      ],
    };
  }
  const issues: LoadIssue[] = [];
  const schema = definitionSchemas()[kind];
  const result = schema.safeParse(value);
  if (!result.success) {
    for (const found of describeSchemaIssues(result.error.issues, value, kind, schema)) {
      issues.push({ severity: found.severity, ...where, ...(found.field ? { field: found.field } : {}), message: found.message });
    }
  }
  if (!issues.some((i) => i.severity === 'error') && kind === 'agent') {
    for (const found of checkAgent(value as AgentDefinition)) {
      issues.push({ severity: found.severity, ...where, field: found.field, message: found.message });
    }
  }
  return { ok: !issues.some((i) => i.severity === 'error'), issues };
}

// ---------------------------------------------------------------- rules between fields

interface FieldProblem {
  severity: LoadIssue['severity'];
  field: string;
  message: string;
}

/** Rules of an agent that its schema cannot express (spec: agents, SideConfig). */
function checkAgent(agent: AgentDefinition): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const error = (field: string, message: string) => problems.push({ severity: 'error', field, message });
  const warn = (field: string, message: string) => problems.push({ severity: 'warning', field, message });
  const dual = agent.type === 'dual_ai';

  if (agent.exposeAsTool && !agent.toolDescription) error('toolDescription', 'an agent with exposeAsTool needs a toolDescription');
  if (dual && !agent.sideB) error('sideB', 'a dual_ai agent needs sideB');
  if (dual && agent.maxSessionTurns === undefined) {
    warn('maxSessionTurns', 'a dual_ai agent without maxSessionTurns: sessions will stop after the runtime default of 20 turns');
  }
  if (!dual && agent.maxSessionTurns !== undefined) {
    warn('maxSessionTurns', 'maxSessionTurns is ignored on an ai_human agent: only dual_ai sessions have several turns');
  }
  if (!dual && agent.sideB !== undefined) {
    warn('sideB', 'side B of an ai_human agent is the human: its prompt is not run');
  }
  for (const [key, side] of [
    ['sideA', agent.sideA],
    ['sideB', agent.sideB],
  ] as const) {
    if (side) checkSide(key, side, error);
  }
  return problems;
}

function checkSide(key: string, side: AgentSide, error: (field: string, message: string) => void): void {
  if (side.stopToolResponseProperty !== undefined && side.stopTool === undefined) {
    error(`${key}.stopToolResponseProperty`, 'stopToolResponseProperty names an argument of stopTool, but this side has no stopTool');
  }
}

// ---------------------------------------------------------------- zod issues to messages

type Issue = z.core.$ZodIssue;
type Path = ReadonlyArray<PropertyKey>;

/** One problem found by a schema, worded for the definition's author. */
export interface DescribedIssue {
  severity: LoadIssue['severity'];
  /** Dotted path of the field (`sideA.maxSteps`, `tools[1].name`); empty for the definition itself. */
  field: string;
  message: string;
}

/**
 * Describes the issues of a failed parse of `root`, looking up the actual
 * value at each issue's path. `schema` (optional) gives the known keys for
 * "did you mean" hints on unknown keys.
 */
export function describeSchemaIssues(issues: readonly Issue[], root: unknown, kind: string, schema?: z.ZodType): DescribedIssue[] {
  const out: DescribedIssue[] = [];
  for (const issue of issues) describeIssue(issue, [], { root, kind, schema }, out);
  return out;
}

interface DescribeContext {
  root: unknown;
  kind: string;
  schema: z.ZodType | undefined;
}

function describeIssue(issue: Issue, base: Path, ctx: DescribeContext, out: DescribedIssue[]): void {
  const path = [...base, ...issue.path];
  const field = fieldPath(path);
  const name = field || ctx.kind;
  const push = (message: string, severity: LoadIssue['severity'] = 'error') => out.push({ severity, field, message });

  if (issue.code === 'unrecognized_keys') {
    for (const key of issue.keys) {
      out.push({ severity: 'warning', field: fieldPath([...path, key]), message: unknownKeyMessage(path, key, ctx) });
    }
    return;
  }

  const { present, value } = valueAt(ctx.root, path);
  if (!present) {
    push(`${name} is required`);
    return;
  }
  const got = `got ${describeValue(value, !isSecretPath(path))}`;

  switch (issue.code) {
    case 'invalid_type':
      push(`${name} must be ${expectedType(issue.expected)}, ${got}`);
      return;
    case 'invalid_value':
      push(`${name} must be ${oneOf(issue.values)}, ${got}`);
      return;
    case 'invalid_union':
      describeUnion(issue, path, name, got, ctx, out);
      return;
    case 'custom':
      // The schemas' custom checks are all type checks worded "<field> must be ...".
      push(/ must be /.test(issue.message) ? `${issue.message}, ${got}` : issue.message);
      return;
    case 'too_small':
    case 'too_big':
      push(isDefaultMessage(issue.message) ? rangeMessage(issue, name, got) : issue.message);
      return;
    case 'invalid_format':
      push(isDefaultMessage(issue.message) ? `${name} must be ${formatName(issue.format)}, ${got}` : issue.message);
      return;
    default:
      push(isDefaultMessage(issue.message) ? `${name}: ${issue.message}` : issue.message);
  }
}

/**
 * A value matching none of a union's options. When exactly one option
 * accepted the value's type (the others failed on the type itself), the
 * problems are that option's, at their own paths: `tools[1].name must be a
 * string`, not `tools[1] is invalid`.
 */
function describeUnion(
  issue: z.core.$ZodIssueInvalidUnion,
  path: Path,
  name: string,
  got: string,
  ctx: DescribeContext,
  out: DescribedIssue[],
): void {
  const custom = !isDefaultMessage(issue.message);
  const discriminated = issue as { options?: unknown[] };
  if (issue.errors.length === 0) {
    // A discriminated union whose discriminator (the last path key) matched no option.
    const options = discriminated.options ?? [];
    out.push({
      severity: 'error',
      field: fieldPath(path),
      message: options.length ? `${name} must be ${oneOf(options)}, ${got}` : `${name}: ${issue.message}`,
    });
    return;
  }
  const typeMatched = issue.errors.filter((branch) => !branch.some((i) => i.path.length === 0 && failsOnType(i)));
  if (typeMatched.length >= 1) {
    const nested: DescribedIssue[] = [];
    for (const inner of typeMatched[0]!) describeIssue(inner, path, ctx, nested);
    if (!custom) {
      out.push(...nested);
      return;
    }
    // Keep the union's own wording at its path, with the details after it.
    const errors = nested.filter((n) => n.severity === 'error');
    out.push(...nested.filter((n) => n.severity !== 'error'));
    if (errors.length) {
      out.push({ severity: 'error', field: fieldPath(path), message: `${issue.message} (${errors.map((e) => e.message).join('; ')})` });
    }
    return;
  }
  if (custom) {
    out.push({ severity: 'error', field: fieldPath(path), message: `${issue.message}, ${got}` });
    return;
  }
  const expected = [...new Set(issue.errors.map(rootExpectation).filter((e): e is string => e !== undefined))];
  const message = expected.length
    ? `${name} must be ${expected.join(' or ')}, ${got}`
    : `${name} matches none of the accepted forms, ${got}`;
  out.push({ severity: 'error', field: fieldPath(path), message });
}

/** True for an issue saying the value is not of the option's type at all. */
function failsOnType(issue: Issue): boolean {
  return issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'custom';
}

/** What one union option expected, from its issue at the option's root. */
function rootExpectation(branch: readonly Issue[]): string | undefined {
  const root = branch.find((i) => i.path.length === 0);
  if (!root) return undefined;
  if (root.code === 'invalid_type') return expectedType(root.expected);
  if (root.code === 'invalid_value') return oneOf(root.values);
  return undefined;
}

function unknownKeyMessage(path: Path, key: string, ctx: DescribeContext): string {
  const known = ctx.schema ? keysAt(ctx.schema, path) : undefined;
  const hint = known ? suggestName(key, known) : '';
  if (path.length === 0) return `unknown ${ctx.kind} field "${key}" is ignored${hint}`;
  const parent = fieldPath(path);
  if (ctx.kind === 'agent' && path.length === 1 && (path[0] === 'sideA' || path[0] === 'sideB')) {
    return `unknown side field "${key}" in ${parent} is ignored${hint}`;
  }
  return `unknown field "${key}" in ${parent} is ignored${hint}`;
}

// ---------------------------------------------------------------- wording helpers

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  bigint: 'a bigint',
  object: 'an object',
  array: 'an array',
  record: 'an object',
  map: 'a Map',
  set: 'a Set',
  function: 'a function',
  date: 'a Date',
  symbol: 'a symbol',
  null: 'null',
  undefined: 'undefined',
};

function expectedType(expected: string): string {
  return TYPE_NAMES[expected] ?? `a ${expected}`;
}

function showPrimitive(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function oneOf(values: readonly unknown[]): string {
  if (values.length === 1) return showPrimitive(values[0]);
  return `one of ${values.map(showPrimitive).join(', ')}`;
}

function formatName(format: string): string {
  return format === 'url' ? 'a URL' : `a valid ${format}`;
}

function rangeMessage(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, name: string, got: string): string {
  const small = issue.code === 'too_small';
  const bound = small ? issue.minimum : issue.maximum;
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case 'string':
      if (small && Number(bound) === 1) return `${name} must not be empty`;
      return `${name} must have ${small ? 'at least' : 'at most'} ${bound} characters, ${got}`;
    case 'array':
    case 'set':
      if (small && Number(bound) === 1) return `${name} must not be empty`;
      return `${name} must have ${small ? 'at least' : 'at most'} ${bound} items`;
    default: {
      if (small && Number(bound) === 0 && !inclusive) return `${name} must be greater than 0, ${got}`;
      const relation = small ? (inclusive ? 'at least' : 'greater than') : inclusive ? 'at most' : 'less than';
      return `${name} must be ${relation} ${bound}, ${got}`;
    }
  }
}

/** zod's own (English) messages; a schema's custom message is kept as written. */
function isDefaultMessage(message: string): boolean {
  return /^(Invalid|Too (small|big)|Unrecognized)\b/.test(message);
}

/** Fields whose values may hold secrets: messages name the kind of a wrong value, not the value. */
function isSecretPath(path: Path): boolean {
  return path.some((key) => key === 'env' || key === 'tenvs' || key === 'options');
}

// ---------------------------------------------------------------- walking values and schemas

/** The value at `path` in `root`, and whether there is one (undefined counts as absent). */
function valueAt(root: unknown, path: Path): { present: boolean; value: unknown } {
  let current: unknown = root;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return { present: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: current !== undefined, value: current };
}

interface SchemaDef {
  type?: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

/** The keys of the object schema at `path` inside `schema` (through optionals, arrays, records and unions). */
function keysAt(schema: z.ZodType, path: Path): string[] | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
      return def.innerType ? keysAt(def.innerType, path) : undefined;
    case 'pipe':
      return def.in ? keysAt(def.in, path) : undefined;
    case 'union': {
      const found = (def.options ?? []).map((option) => keysAt(option, path)).filter((k): k is string[] => k !== undefined);
      return found.length ? [...new Set(found.flat())] : undefined;
    }
    default:
      break;
  }
  if (path.length === 0) return def.type === 'object' && def.shape ? Object.keys(def.shape) : undefined;
  const [head, ...rest] = path;
  if (def.type === 'object') {
    const next = def.shape?.[String(head)];
    return next ? keysAt(next, rest) : undefined;
  }
  if (def.type === 'array' && typeof head === 'number' && def.element) return keysAt(def.element, rest);
  if (def.type === 'record' && def.valueType) return keysAt(def.valueType, rest);
  return undefined;
}
