/**
 * How a prompt's `reasoning` settings reach the model request. OpenAI's Chat
 * Completions takes `reasoning_effort` (it has no reasoning token budget);
 * OpenRouter-style servers take a `reasoning` object with effort and
 * max_tokens. `exclude` is applied by agentport, not sent: asking the server
 * to drop reasoning would also keep `include` from storing it.
 */
import type { ModelDefinition, ReasoningConfig } from '../definitions/types.js';

export function reasoningRequestFields(reasoning: ReasoningConfig | undefined, model: ModelDefinition): Record<string, unknown> {
  if (!reasoning || (reasoning.effort === undefined && reasoning.maxTokens === undefined)) return {};
  if (model.reasoningStyle === 'openrouter') {
    return {
      reasoning: {
        ...(reasoning.effort ? { effort: reasoning.effort } : {}),
        ...(reasoning.maxTokens !== undefined ? { max_tokens: reasoning.maxTokens } : {}),
      },
    };
  }
  return reasoning.effort ? { reasoning_effort: reasoning.effort } : {};
}
