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

export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const missing: string[] = [];
  const fromEnv: Array<{ name: string; value: string }> = [];
  const value = text.replace(PLACEHOLDER, (_match, envName?: string, envDefault?: string, bareName?: string, bareDefault?: string) => {
    const name = (envName ?? bareName)!;
    const fallback = envName !== undefined ? envDefault : bareDefault;
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
