/**
 * `${env:NAME}` and `${env:NAME:default}` in agents/mcp.json, plus the
 * `${NAME}` / `${NAME:-default}` forms Claude Code's `.mcp.json` uses, so a
 * file copied from there works unchanged. A variable that is not set and has
 * no default is reported by name; nothing is expanded to an empty string
 * silently.
 */

/** `${env:NAME}`, `${env:NAME:default}`, `${NAME}`, `${NAME:-default}`. */
const PLACEHOLDER = /\$\{(?:env:([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?|([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?)\}/g;

export interface Expanded {
  value: string;
  /** Variables used without a value and without a default. */
  missing: string[];
  /** What was taken from the environment (not defaults), for deciding what is secret. */
  fromEnv: Array<{ name: string; value: string }>;
}

/** One placeholder: the variable and its default, if it has one. */
interface EnvReference {
  name: string;
  fallback?: string;
}

function referenceOf(
  envName: string | undefined,
  envDefault: string | undefined,
  bareName: string | undefined,
  bareDefault: string | undefined,
): EnvReference {
  const name = (envName ?? bareName)!;
  const fallback = envName !== undefined ? envDefault : bareDefault;
  return fallback === undefined ? { name } : { name, fallback };
}

/** The variables a string refers to, in order (what `pack` asks the bundle's user for). */
export function envReferences(text: string): EnvReference[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => referenceOf(m[1], m[2], m[3], m[4]));
}

export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const missing: string[] = [];
  const fromEnv: Array<{ name: string; value: string }> = [];
  const value = text.replace(PLACEHOLDER, (_match, envName?: string, envDefault?: string, bareName?: string, bareDefault?: string) => {
    const { name, fallback } = referenceOf(envName, envDefault, bareName, bareDefault);
    const found = env[name];
    if (found !== undefined) {
      fromEnv.push({ name, value: found });
      return found;
    }
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing, fromEnv };
}
