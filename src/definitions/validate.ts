/**
 * Validates one definition against its schema and reports problems as
 * {@link LoadIssue}s naming the file, the definition and the field.
 */
import type { z } from 'zod';
import type { DefinitionKind } from './brand.js';
import { fieldPath, type LoadIssue } from './issues.js';
import {
  agentDefinitionSchema,
  hookDefinitionSchema,
  modelDefinitionSchema,
  promptDefinitionSchema,
  toolDefinitionSchema,
} from './schemas.js';

const SCHEMAS: Record<DefinitionKind, z.ZodObject<z.ZodRawShape> | z.ZodType> = {
  prompt: promptDefinitionSchema,
  tool: toolDefinitionSchema,
  model: modelDefinitionSchema,
  hook: hookDefinitionSchema,
  agent: agentDefinitionSchema,
};

/** Keys each kind knows; anything else is reported as a warning (likely a typo). */
const KNOWN_KEYS: Record<DefinitionKind, ReadonlySet<string>> = {
  prompt: new Set(Object.keys(promptDefinitionSchema.shape)),
  tool: new Set(Object.keys(toolDefinitionSchema.shape)),
  model: new Set(Object.keys(modelDefinitionSchema.shape)),
  hook: new Set(Object.keys(hookDefinitionSchema.shape)),
  agent: new Set([
    'name', 'type', 'toolDescription', 'sideA', 'sideB', 'maxSessionTurns', 'hooks', 'env',
    'variables', 'tags', 'exposeAsTool', 'title', 'alwaysLoad', 'defer',
  ]),
};

export interface ValidationOutcome {
  ok: boolean;
  issues: LoadIssue[];
}

export function validateDefinition(
  kind: DefinitionKind,
  value: unknown,
  file: string,
  definitionName: string | undefined,
): ValidationOutcome {
  const issues: LoadIssue[] = [];
  if (typeof value !== 'object' || value === null) {
    issues.push({ severity: 'error', file, definition: definitionName, message: `expected a ${kind} definition object` });
    return { ok: false, issues };
  }
  const result = SCHEMAS[kind].safeParse(value);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const field = fieldPath(issue.path);
      issues.push({
        severity: 'error',
        file,
        definition: definitionName,
        ...(field ? { field } : {}),
        message: describeZodIssue(issue, kind, field),
      });
    }
  }
  for (const key of Object.keys(value)) {
    if (!KNOWN_KEYS[kind].has(key)) {
      issues.push({ severity: 'warning', file, definition: definitionName, field: key, message: `unknown ${kind} field "${key}" is ignored` });
    }
  }
  return { ok: result.success, issues };
}

function describeZodIssue(issue: z.core.$ZodIssue, kind: DefinitionKind, field: string): string {
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return `${field || kind} is required`;
  }
  return issue.message;
}
