/**
 * Loading `.prompty` files: frontmatter checks, replacement constructs, inputs schema and a static
 * check of the body, with every problem of a file reported at once.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { formatIssue, IssueCollector, promptyError, promptyErrorData } from './errors.js';
import { checkFields, FieldReporter } from './fields.js';
import { parseFrontmatter, splitFrontmatter, type ParsedFrontmatter } from './frontmatter.js';
import { checkTemplate, detectEngine, rememberCompiled } from './engine.js';
import { applySample, inputsFromSample, normalizeInputs, objectSchema } from './inputs.js';
import type { CompiledJinja } from './jinja.js';
import { checkLiteralMediaUrl } from './media.js';
import { PARAMS_NAME_RE, PARAMS_RE, replaceLoadTime, type ReplacementContext } from './replacements.js';
import { scanTemplate, sectionKind } from './sections.js';
import { isSectionError, parseSectionYaml, toolCallsFromYaml, toolsFromYaml } from './structured.js';
import type { LoadedPrompty, PromptyEngine, PromptyInput } from './types.js';

/** Options of {@link loadPromptyFile}. */
export interface LoadPromptyOptions {
  /** The agents folder; `${file:}` and local media paths must stay inside it. */
  agentsDir: string;
  /** Values for `${env:NAME}`; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/** File extension of Prompty files. */
const PROMPTY_EXTENSION = '.prompty';

/**
 * Reads and checks a `.prompty` file.
 *
 * @param file path of the file (relative paths are resolved against the working directory).
 * @returns the loaded file; `warnings` lists non-fatal problems (unknown fields, ignored text).
 * @throws {AgentportError} (code `PROMPTY_INVALID`, `data` {@link PromptyErrorData}) listing every
 *   problem found, each with the file, line and field.
 */
export async function loadPromptyFile(file: string, opts: LoadPromptyOptions): Promise<LoadedPrompty> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (err) {
    throw promptyError(abs, [{ message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})` }]);
  }
  return parsePrompty(text, { ...opts, file: abs });
}

/**
 * Checks `.prompty` source text as if read from `opts.file` (used by {@link loadPromptyFile}; handy
 * for sources that do not live on disk, though relative paths still resolve from `opts.file`).
 * @throws {AgentportError} code `PROMPTY_INVALID`, as {@link loadPromptyFile}
 */
export async function parsePrompty(source: string, opts: LoadPromptyOptions & { file: string }): Promise<LoadedPrompty> {
  const file = path.resolve(opts.file);
  const agentsDir = path.resolve(opts.agentsDir);
  const issues = new IssueCollector(file);
  const ctx: ReplacementContext = { file, agentsDir, env: opts.env ?? process.env };
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');

  const split = splitFrontmatter(text);
  if ('error' in split) throw promptyError(file, [{ line: 1, message: split.error }]);

  let fm: ParsedFrontmatter | null = null;
  if (split.frontmatter !== null) fm = await parseFrontmatter(split.frontmatter, split.frontmatterLine, ctx, issues);
  const data = fm?.data ?? {};
  const reporter = new FieldReporter(fm, issues);
  // With unparsable YAML the fields are unknown: report the YAML problem, not missing fields.
  const yamlBroken = split.frontmatter !== null && fm === null;
  const checked = yamlBroken ? { fields: {}, metadata: {} } : checkFields(data, reporter);

  const declared = data['inputs'] !== undefined && data['inputs'] !== null;
  let inputs: PromptyInput[] = declared ? (normalizeInputs(data['inputs'], ['inputs'], reporter) ?? []) : inputsFromSample(data['sample']);
  // A `${file:}` sample that could not be read is reported already, and still holds its text.
  const sampleUnresolved = typeof data['sample'] === 'string' && data['sample'].includes('${');
  if (!sampleUnresolved) inputs = applySample(inputs, data['sample'], declared, reporter);
  let outputs: PromptyInput[] = [];
  if (data['outputs'] !== undefined && data['outputs'] !== null) {
    outputs = normalizeInputs(data['outputs'], ['outputs'], reporter) ?? [];
  }

  const { template, sourceLines } = await resolveBody(split.body, split.bodyLine, ctx, issues);
  const engine = detectEngine(checked.engine, template);
  const jinja = await checkBody(template, sourceLines, engine, inputs, ctx, issues);

  try {
    issues.throwIfAny();
  } catch (error) {
    const data = promptyErrorData(error);
    if (data && !yamlBroken) {
      data.references = {
        name: checked.name ?? path.basename(file, PROMPTY_EXTENSION),
        ...(typeof checked.model === 'string' ? { model: checked.model } : {}),
        ...(checked.fields.tools ? { tools: checked.fields.tools } : {}),
        ...(checked.fields.hooks ? { hooks: checked.fields.hooks } : {}),
      };
    }
    throw error;
  }
  const warningIssues = issues.sortedWarnings();
  const loaded: LoadedPrompty = {
    file,
    agentsDir,
    name: checked.name ?? path.basename(file, PROMPTY_EXTENSION),
    description: checked.description ?? '',
    // checkFields reported a missing or invalid model, so throwIfAny has thrown.
    model: checked.model ?? '',
    inputSchema: objectSchema(inputs),
    inputs,
    outputs,
    ...(outputs.length > 0 ? { outputSchema: objectSchema(outputs) } : {}),
    engine,
    fields: checked.fields,
    metadata: checked.metadata,
    warnings: warningIssues.map((w) => formatIssue(file, w)),
    warningIssues,
    template,
    templateSourceLines: sourceLines,
  };
  if (data['sample'] !== undefined) loaded.sample = data['sample'];
  rememberCompiled(loaded, jinja);
  return loaded;
}

/** Substitutes `${env:}` and `${file:}` in the body line by line, keeping each line's file line. */
async function resolveBody(
  body: string,
  bodyLine: number,
  ctx: ReplacementContext,
  issues: IssueCollector,
): Promise<{ template: string; sourceLines: number[] }> {
  const out: string[] = [];
  const sourceLines: number[] = [];
  const lines = body.split('\n');
  for (const [i, line] of lines.entries()) {
    const result = await replaceLoadTime(line, ctx, false);
    for (const e of result.errors) issues.error({ line: bodyLine + i, field: `\${${e.protocol}}`, message: e.message });
    for (const piece of String(result.value).split('\n')) {
      out.push(piece);
      sourceLines.push(bodyLine + i);
    }
  }
  return { template: out.join('\n'), sourceLines };
}

/** Template text that only a call fills in: the static checks leave it alone. */
const DYNAMIC_RE = /\{\{|\{%|\{#|\$\{params:/;

/**
 * Static checks of a template: engine syntax (and the jinja2 sandbox), structure, `${params:}`
 * names, literal YAML and media.
 * @returns the compiled jinja2 template, when the body is jinja2 and compiles
 */
async function checkBody(
  template: string,
  sourceLines: number[],
  engine: PromptyEngine,
  inputs: PromptyInput[],
  ctx: ReplacementContext,
  issues: IssueCollector,
): Promise<CompiledJinja | undefined> {
  const lineAt = (templateLine: number): number | undefined => sourceLines[templateLine];
  const at = (templateLine: number | undefined): { line?: number } => {
    const line = templateLine === undefined ? undefined : lineAt(templateLine);
    return line !== undefined ? { line } : {};
  };

  const names = new Set(inputs.map((i) => i.name));
  template.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(PARAMS_RE)) {
      const name = (m[1] ?? '').trim();
      if (!PARAMS_NAME_RE.test(name)) {
        issues.error({ ...at(i), field: '${params}', message: `invalid parameter name in ${m[0]}` });
      } else if (inputs.length > 0 && !names.has(name.split('.')[0] ?? '')) {
        issues.warn({ ...at(i), field: '${params}', message: `${m[0]} names no declared input` });
      }
    }
  });

  const scan = scanTemplate(template);
  const syntax = await checkTemplate(
    engine,
    template,
    scan,
    inputs.map((i) => i.name),
    ctx.file,
  );
  for (const problem of syntax.problems) issues.error({ ...at(problem.line), field: 'template', message: problem.message });

  for (const problem of scan.problems) {
    const issue = { ...at(problem.line), field: problem.field, message: problem.message };
    if (problem.severity === 'error') issues.error(issue);
    else issues.warn(issue);
  }

  for (const section of scan.sections) {
    const kind = sectionKind(section.head);
    if (kind !== 'tools' && kind !== 'tool_call') continue;
    const content = section.lines.join('\n');
    if (DYNAMIC_RE.test(content)) continue;
    try {
      const value = parseSectionYaml(content, null);
      if (kind === 'tools') toolsFromYaml(value);
      else toolCallsFromYaml(value);
    } catch (err) {
      if (!isSectionError(err)) throw err;
      const offset = err.data?.lineOffset;
      const line = typeof offset === 'number' ? section.start + 1 + offset : section.start;
      issues.error({ ...at(line), field: kind, message: err.message });
    }
  }

  for (const [line, links] of scan.media) {
    for (const link of links) {
      if (DYNAMIC_RE.test(link.url)) continue;
      const problem = await checkLiteralMediaUrl(link.url, ctx);
      if (problem !== null) issues.error({ ...at(line), field: 'media', message: problem });
    }
  }
  return syntax.jinja;
}
