/**
 * The runtime API the server and the CLI share: run an exposed prompt or agent
 * once on its model and return the model's text.
 */
import type { ModelRequestMessage, PromptDefinition } from '../definitions/types.js';
import { AgentportError, errorMessage } from '../errors.js';
import { ModelResolver, modelRequestBase } from '../models/resolveModel.js';
import type { LoadedPrompt, Registry } from '../registry/types.js';
import { prepareInput } from './input.js';

export interface RuntimeOptions {
  registry: Registry;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RunRequest {
  /** Name of an exposed prompt or agent. */
  target: string;
  args: Record<string, unknown>;
  signal?: AbortSignal;
  /** Called with a human-readable message as the run advances. */
  onProgress?: (message: string) => void;
}

export interface RunResult {
  text: string;
  /** The prompt that ran (an agent runs its side A prompt). */
  prompt: string;
  model: string;
}

export interface Runtime {
  readonly registry: Registry;
  /** The prompt a target runs, or undefined when no prompt or agent has that name. */
  promptFor(target: string): LoadedPrompt | undefined;
  /** Validates arguments without running anything; throws INVALID_ARGUMENTS. */
  validate(target: string, args: Record<string, unknown>): void;
  runPrompt(request: RunRequest): Promise<RunResult>;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { registry } = options;
  const models = new ModelResolver(registry.models, options.env ?? process.env);

  const promptFor = (target: string): LoadedPrompt | undefined => {
    const agent = registry.agents.get(target);
    return registry.prompts.get(agent ? agent.definition.sideA.prompt : target);
  };

  const requirePrompt = (target: string): LoadedPrompt => {
    const prompt = promptFor(target);
    if (!prompt) throw new AgentportError('UNKNOWN_TOOL', `no prompt or agent named "${target}"`);
    return prompt;
  };

  return {
    registry,
    promptFor,
    validate(target, args) {
      prepareInput(requirePrompt(target).definition, args);
    },
    async runPrompt(request) {
      const prompt = requirePrompt(request.target);
      const input = prepareInput(prompt.definition, request.args);
      const model = models.resolve(prompt.definition.model);
      const messages: ModelRequestMessage[] = [
        { role: 'system', content: prompt.systemText },
        { role: 'user', content: input.userMessage },
      ];
      request.onProgress?.(`${prompt.name}: calling model ${model.definition.name}`);
      if (request.signal?.aborted) throw new AgentportError('CANCELLED', 'the call was cancelled');
      let response;
      try {
        response = await model.provider.complete(
          { ...modelRequestBase(model.definition), messages, ...reasoningFields(prompt.definition) },
          request.signal ? { signal: request.signal } : {},
        );
      } catch (error) {
        if (request.signal?.aborted) throw new AgentportError('CANCELLED', 'the call was cancelled');
        throw new AgentportError('MODEL_FAILED', `model "${model.definition.name}" failed: ${errorMessage(error)}`);
      }
      return { text: response.text ?? '', prompt: prompt.name, model: model.definition.name };
    },
  };
}

function reasoningFields(prompt: PromptDefinition): Record<string, unknown> {
  const effort = prompt.reasoning?.effort;
  return effort ? { reasoning_effort: effort } : {};
}
