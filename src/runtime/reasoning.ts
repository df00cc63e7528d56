/**
 * How a prompt's `reasoning` settings reach the model request. OpenAI's Chat
 * Completions takes `reasoning_effort`; OpenRouter-style servers take a
 * `reasoning` object with effort, max_tokens and exclude.
 */
import type { ModelDefinition, ReasoningConfig } from '../definitions/types.js';

export function reasoningRequestFields(reasoning: ReasoningConfig | undefined, model: ModelDefinition): Record<string, unknown> {
  if (!reasoning || (reasoning.effort === undefined && reasoning.maxTokens === undefined && reasoning.exclude === undefined)) return {};
  if (model.reasoningStyle === 'openrouter') {
    return {
      reasoning: {
        ...(reasoning.effort ? { effort: reasoning.effort } : {}),
        ...(reasoning.maxTokens !== undefined ? { max_tokens: reasoning.maxTokens } : {}),
        ...(reasoning.exclude !== undefined ? { exclude: reasoning.exclude } : {}),
      },
    };
  }
  return reasoning.effort ? { reasoning_effort: reasoning.effort } : {};
}
