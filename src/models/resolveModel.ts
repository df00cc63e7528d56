/**
 * Turns a model definition into a provider ready to call: the built-in
 * OpenAI-compatible one (base URL and API key from the definition or the
 * environment) or a user-supplied provider object.
 */
import type { ModelDefinition, ModelProvider, ModelRequest } from '../definitions/types.js';
import { AgentportError } from '../errors.js';
import { OpenAICompatibleProvider, type ModelTransport } from './openaiProvider.js';

export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';
export const BASE_URL_ENV = 'OPENAI_BASE_URL';

export interface ResolvedModel {
  definition: ModelDefinition;
  provider: ModelProvider;
}

export class ModelResolver {
  private readonly cache = new Map<string, ResolvedModel>();

  constructor(
    private readonly models: ReadonlyMap<string, { definition: ModelDefinition }>,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  /** Resolves a model by name; a missing API key is an error naming the model and the variable. */
  resolve(name: string): ResolvedModel {
    const cached = this.cache.get(name);
    if (cached) return cached;
    const entry = this.models.get(name);
    if (!entry) throw new AgentportError('MODEL_CONFIG', `unknown model "${name}"`);
    const definition = entry.definition;
    const resolved: ResolvedModel = {
      definition,
      provider: definition.provider === 'openai' ? this.openAIProvider(definition) : definition.provider,
    };
    this.cache.set(name, resolved);
    return resolved;
  }

  private openAIProvider(definition: ModelDefinition): ModelProvider {
    const keyEnv = definition.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
    const apiKey = this.env[keyEnv];
    if (!apiKey) {
      throw new AgentportError(
        'MODEL_CONFIG',
        `model "${definition.name}" has no API key: set the environment variable ${keyEnv}` +
          ' (a local OpenAI-compatible server accepts any value)',
        { model: definition.name, variable: keyEnv },
      );
    }
    const baseURL = definition.baseURL ?? this.env[BASE_URL_ENV];
    return new OpenAICompatibleProvider({
      apiKey,
      ...(baseURL ? { baseURL } : {}),
      ...(definition.timeoutMs ? { timeoutMs: definition.timeoutMs } : {}),
      transport: modelTransport(this.env),
    });
  }
}

/** The request fields a model definition contributes (id, sampling options, extras). */
export function modelRequestBase(definition: ModelDefinition): Omit<ModelRequest, 'messages'> & { model: string } {
  return {
    ...(definition.options ?? {}),
    model: definition.model,
    ...(definition.temperature !== undefined ? { temperature: definition.temperature } : {}),
    ...(definition.maxTokens !== undefined ? { max_tokens: definition.maxTokens } : {}),
  };
}

/** Variables of the environment that name a proxy: they apply to Node's fetch (NODE_USE_ENV_PROXY), not to node:http. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NODE_USE_ENV_PROXY'];

/**
 * How the built-in provider sends its requests (docs/runtime.md, "Models"): `AGENTPORT_MODEL_TRANSPORT`,
 * `http` unless a proxy is set.
 */
export function modelTransport(env: Readonly<Record<string, string | undefined>>): ModelTransport {
  const asked = env.AGENTPORT_MODEL_TRANSPORT;
  if (asked !== undefined && asked !== '' && asked !== 'http' && asked !== 'fetch') {
    throw new AgentportError('MODEL_CONFIG', `AGENTPORT_MODEL_TRANSPORT must be "http" or "fetch", not "${asked}"`, {
      variable: 'AGENTPORT_MODEL_TRANSPORT',
    });
  }
  if (asked === 'fetch' || PROXY_VARIABLES.some((name) => env[name])) return 'fetch';
  return 'http';
}
