/**
 * `.prompty` files as prompts: each becomes a prompt definition the rest of
 * agentport treats like a `definePrompt` module (exposed, included, used as a
 * sub-prompt), with its loaded template kept for rendering at call time.
 */
import type { LoadFailures } from './failures.js';
import type { LoadIssue } from '../definitions/issues.js';
import type { ModelDefinition, PromptDefinition, ToolReference, VariableDefinition } from '../definitions/types.js';
import { loadPromptyFile } from '../prompty/load.js';
import { promptyErrorData } from '../prompty/errors.js';
import type { LoadedPrompty, PromptyModelObject } from '../prompty/types.js';
import { promptyToolReference } from '../upstream/prompty.js';

export interface PromptyPrompt {
  definition: PromptDefinition;
  prompty: LoadedPrompty;
  /** A model described inline in the frontmatter, registered under an internal name. */
  inlineModel?: ModelDefinition;
}

export async function loadPromptyPrompt(
  file: string,
  displayFile: string,
  agentsDir: string,
  issues: LoadIssue[],
  failures?: LoadFailures,
): Promise<PromptyPrompt | undefined> {
  let prompty: LoadedPrompty;
  try {
    prompty = await loadPromptyFile(file, { agentsDir, env: process.env });
  } catch (error) {
    const data = promptyErrorData(error);
    if (!data) {
      // Not a problem of the file's content (unreadable, say): still one issue, so the rest of the folder is reported.
      issues.push({
        severity: 'error',
        file: displayFile,
        message: `cannot load: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      });
      return undefined;
    }
    for (const issue of data.issues) {
      issues.push({
        severity: 'error',
        file: issue.line !== undefined ? `${displayFile}:${issue.line}` : displayFile,
        ...(issue.field ? { field: issue.field } : {}),
        message: issue.message,
      });
    }
    // Its references are checked with everything else (references.ts), as a TypeScript definition's are.
    if (data.references) {
      const { tools, ...rest } = data.references;
      const references = tools ? { ...rest, tools: tools.map(promptyToolReference) } : rest;
      failures?.rejectDefinition('prompt', data.references.name, displayFile, references);
    }
    return undefined;
  }
  for (const warning of prompty.warningIssues) {
    issues.push({
      severity: 'warning',
      file: warning.line !== undefined ? `${displayFile}:${warning.line}` : displayFile,
      definition: prompty.name,
      ...(warning.field ? { field: warning.field } : {}),
      message: warning.message,
    });
  }

  let model: string;
  let inlineModel: ModelDefinition | undefined;
  if (typeof prompty.model === 'string') {
    model = prompty.model;
  } else {
    inlineModel = inlineModelOf(prompty.name, prompty.model);
    model = inlineModel.name;
  }

  const fields = prompty.fields;
  const hasInputs = Object.keys(prompty.inputSchema.shape).length > 0;
  const definition: PromptDefinition = {
    name: prompty.name,
    toolDescription: prompty.description,
    model,
    // The system text other prompts include; calls render the whole template instead.
    prompt: await systemTextOf(prompty),
    ...(hasInputs ? { requiredSchema: prompty.inputSchema } : {}),
    ...(prompty.outputSchema ? { responseSchema: prompty.outputSchema } : {}),
    ...(fields.exposeAsTool !== undefined ? { exposeAsTool: fields.exposeAsTool } : {}),
    ...(fields.toolChoice ? { toolChoice: fields.toolChoice } : {}),
    ...(fields.reasoning ? { reasoning: fields.reasoning } : {}),
    ...(fields.hooks ? { hooks: fields.hooks } : {}),
    // Prompty `kind: mcp` entries become mcp:<server> references (src/upstream/prompty.ts).
    ...(fields.tools ? { tools: fields.tools.map(promptyToolReference) as ToolReference[] } : {}),
    ...(fields.includeChat !== undefined ? { includeChat: fields.includeChat } : {}),
    ...(fields.includePastTools !== undefined ? { includePastTools: fields.includePastTools } : {}),
    ...(fields.parallelToolCalls !== undefined ? { parallelToolCalls: fields.parallelToolCalls } : {}),
    ...(fields.recentImageThreshold !== undefined ? { recentImageThreshold: fields.recentImageThreshold } : {}),
    ...(fields.env ? { env: fields.env } : {}),
    ...(fields.variables ? { variables: fields.variables.map(variableOf) } : {}),
    ...(fields.alwaysLoad !== undefined ? { alwaysLoad: fields.alwaysLoad } : {}),
    ...(fields.defer !== undefined ? { defer: fields.defer } : {}),
  };
  return { definition, prompty, ...(inlineModel ? { inlineModel } : {}) };
}

/** Prompty 2 option names and the Chat Completions fields they are sent as. */
const OPTION_NAMES: Record<string, string> = {
  maxOutputTokens: 'max_tokens',
  topP: 'top_p',
  topK: 'top_k',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  stopSequences: 'stop',
  allowMultipleToolCalls: 'parallel_tool_calls',
};

/**
 * An inline model object becomes a model definition on the built-in OpenAI-compatible provider
 * (the loader has refused other providers unless they come with a baseURL).
 */
function inlineModelOf(promptName: string, model: PromptyModelObject): ModelDefinition {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(model.options ?? {})) {
    // Provider-specific options pass through as they are.
    if (key === 'additionalProperties' && typeof value === 'object' && value !== null) Object.assign(options, value);
    else options[OPTION_NAMES[key] ?? key] = value;
  }
  const { temperature, max_tokens, ...rest } = options;
  return {
    name: `${promptName}.model`,
    provider: 'openai',
    model: model.id,
    ...(model.baseURL ? { baseURL: model.baseURL } : {}),
    ...(model.apiKeyEnv ? { apiKeyEnv: model.apiKeyEnv } : {}),
    ...(typeof temperature === 'number' ? { temperature } : {}),
    ...(typeof max_tokens === 'number' ? { maxTokens: max_tokens } : {}),
    ...(Object.keys(rest).length ? { options: rest } : {}),
  };
}

function variableOf(raw: Record<string, unknown>): VariableDefinition {
  return {
    name: String(raw.name),
    type: raw.type === 'secret' ? 'secret' : 'text',
    required: raw.required === true,
    ...(raw.scoped === true ? { scoped: true } : {}),
    description: typeof raw.description === 'string' ? raw.description : '',
  };
}

/** The template's system messages rendered with the sample (or defaults), for includes. */
async function systemTextOf(prompty: LoadedPrompty): Promise<string> {
  const { renderPrompty } = await import('../prompty/render.js');
  try {
    const sample = typeof prompty.sample === 'object' && prompty.sample !== null ? (prompty.sample as Record<string, unknown>) : {};
    const { messages } = await renderPrompty(prompty, sample);
    return messages
      .filter((m) => m.kind === 'message' && m.role === 'system')
      .map((m) => (m.kind === 'message' ? m.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : ''))
      .join('\n\n');
  } catch {
    return '';
  }
}
