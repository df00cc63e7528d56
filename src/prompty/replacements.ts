/**
 * Replacement constructs: `${env:NAME}`, `${env:NAME:default}`, `${file:path}` (resolved at load)
 * and `${params:name}` (resolved at render, see render.ts).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { hasCode } from '../errors.js';
import { resolveConfined } from './paths.js';

/** What load-time replacements need. */
export interface ReplacementContext {
  /** Absolute path of the `.prompty` file; `${file:}` paths are relative to its folder. */
  file: string;
  agentsDir: string;
  env: Record<string, string | undefined>;
}

/** Matches `${env:...}` and `${file:...}` on one line. */
const LOAD_TIME_RE = /\$\{(env|file):([^}\r\n]*)\}/g;
/** Matches `${params:...}` on one line. */
export const PARAMS_RE = /\$\{params:([^}\r\n]*)\}/g;
/** A valid `${params:}` name: an input name, optionally a dotted path into it. */
export const PARAMS_NAME_RE = /^[A-Za-z_][\w-]*(?:\.[\w-]+)*$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A construct that could not be resolved. */
interface ReplacementError {
  protocol: 'env' | 'file';
  message: string;
}

/** The result of replacing constructs in one string. */
export interface ReplacementResult {
  value: unknown;
  /** One entry per construct that could not be resolved. */
  errors: ReplacementError[];
}

function resolveEnv(spec: string, env: ReplacementContext['env']): { value?: string; error?: string } {
  const colon = spec.indexOf(':');
  const name = colon === -1 ? spec : spec.slice(0, colon);
  const fallback = colon === -1 ? undefined : spec.slice(colon + 1);
  if (!ENV_NAME_RE.test(name)) return { error: `\${env:${spec}}: invalid variable name "${name}"` };
  const value = env[name];
  if (value !== undefined) return { value };
  if (fallback !== undefined) return { value: fallback };
  return { error: `environment variable ${name} is not set and \${env:${name}} has no default` };
}

/**
 * Reads a `${file:}` reference: a JSON (`.json`) or YAML (`.yaml`, `.yml`) file inside the agents
 * folder, parsed.
 */
async function readReplacementFile(ref: string, ctx: ReplacementContext): Promise<{ value?: unknown; error?: string }> {
  const spec = ref.trim();
  const ext = path.extname(spec).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') {
    return { error: `\${file:${spec}}: only .json, .yaml and .yml files can be hoisted` };
  }
  let real: string;
  try {
    real = await resolveConfined(spec, path.dirname(ctx.file), ctx.agentsDir);
  } catch (err) {
    if (hasCode(err, 'INVALID_PATH')) return { error: `\${file:${spec}}: ${err.message}` };
    throw err;
  }
  let text: string;
  try {
    text = await readFile(real, 'utf8');
  } catch (err) {
    return { error: `\${file:${spec}}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    return { value: ext === '.json' ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown) };
  } catch (err) {
    return { error: `\${file:${spec}}: invalid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}` };
  }
}

/**
 * Replaces `${env:}` and `${file:}` constructs in `text`.
 *
 * With `whole: true` (frontmatter scalars), a string that is exactly one `${file:}` construct becomes
 * the parsed file value; otherwise (and always in the body) a file is inserted as compact JSON text.
 * Unresolvable constructs are reported in `errors` and left in place.
 */
export async function replaceLoadTime(text: string, ctx: ReplacementContext, whole: boolean): Promise<ReplacementResult> {
  if (!text.includes('${')) return { value: text, errors: [] };
  const errors: ReplacementError[] = [];
  const single = /^\s*\$\{file:([^}\r\n]*)\}\s*$/.exec(text);
  if (whole && single) {
    const r = await readReplacementFile(single[1] ?? '', ctx);
    if (r.error !== undefined) return { value: text, errors: [{ protocol: 'file', message: r.error }] };
    return { value: r.value, errors };
  }
  const matches = [...text.matchAll(LOAD_TIME_RE)];
  if (matches.length === 0) return { value: text, errors };
  let out = '';
  let last = 0;
  for (const m of matches) {
    const [all, protocol, spec = ''] = m;
    const start = m.index;
    out += text.slice(last, start);
    last = start + all.length;
    if (protocol === 'env') {
      const r = resolveEnv(spec, ctx.env);
      if (r.error !== undefined) {
        errors.push({ protocol: 'env', message: r.error });
        out += all;
      } else {
        out += r.value ?? '';
      }
    } else {
      const r = await readReplacementFile(spec, ctx);
      if (r.error !== undefined) {
        errors.push({ protocol: 'file', message: r.error });
        out += all;
      } else {
        out += JSON.stringify(r.value ?? null);
      }
    }
  }
  out += text.slice(last);
  return { value: out, errors };
}
