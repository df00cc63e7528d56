/**
 * Rewrites deprecated fields of a validated definition to their current
 * names, so the runtime only ever reads the new ones. The definition the user
 * wrote is left alone: a normalised copy is returned.
 *
 * Agent sides: `endSessionTool` and `endConversationTool` become
 * `sessionStop`, `failSessionTool` becomes `sessionFail`, `statusTool`
 * becomes `sessionStatus`. Each rewrite is reported with a warning; giving an
 * alias together with its new name (or two aliases of one name) is an error.
 */
import { brand } from './brand.js';
import type { LoadIssue } from './issues.js';
import { DEPRECATED_SIDE_FIELDS } from './schemas.js';
import type { AgentDefinition, AgentSide } from './types.js';

type DeprecatedSideField = keyof typeof DEPRECATED_SIDE_FIELDS;
type SideWithAliases = AgentSide & Partial<Record<DeprecatedSideField, string>>;

export interface NormalizedAgent {
  /** The copy with new names only; undefined when an alias clashes with its new name. */
  definition: AgentDefinition | undefined;
  issues: LoadIssue[];
}

/** Normalises the sides of a validated agent (see the module comment). */
export function normalizeAgent(agent: AgentDefinition, file: string): NormalizedAgent {
  const issues: LoadIssue[] = [];
  const copy: AgentDefinition = { ...agent };
  let ok = true;
  for (const key of ['sideA', 'sideB'] as const) {
    const side = agent[key];
    if (!side) continue;
    const normalised = normalizeSide(side, key, agent.name, file, issues);
    if (normalised) copy[key] = normalised;
    else ok = false;
  }
  return { definition: ok ? brand(copy, 'agent') : undefined, issues };
}

function normalizeSide(
  side: SideWithAliases,
  key: 'sideA' | 'sideB',
  agentName: string,
  file: string,
  issues: LoadIssue[],
): AgentSide | undefined {
  const where = { file, definition: agentName };
  const copy: SideWithAliases = { ...side };
  let ok = true;
  for (const [alias, current] of Object.entries(DEPRECATED_SIDE_FIELDS) as Array<[DeprecatedSideField, keyof AgentSide]>) {
    const value = side[alias];
    delete copy[alias];
    if (value === undefined) continue;
    const field = `${key}.${alias}`;
    if (copy[current] !== undefined) {
      // Either the new name itself or another alias already set it.
      const other = side[current] !== undefined ? current : aliasesOf(current).find((a) => a !== alias && side[a] !== undefined);
      issues.push({
        severity: 'error',
        ...where,
        field,
        message: `${alias} is a deprecated alias of ${current}, which ${other === current ? 'is also given' : `${other} also sets`}: keep only ${current}`,
      });
      ok = false;
      continue;
    }
    (copy as unknown as Record<string, unknown>)[current] = value;
    issues.push({
      severity: 'warning',
      ...where,
      field,
      message: `${alias} is deprecated: rename it to ${current} (read as ${key}.${current})`,
    });
  }
  return ok ? copy : undefined;
}

function aliasesOf(current: string): DeprecatedSideField[] {
  return (Object.keys(DEPRECATED_SIDE_FIELDS) as DeprecatedSideField[]).filter((alias) => DEPRECATED_SIDE_FIELDS[alias] === current);
}
