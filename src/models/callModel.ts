/**
 * Calling a model with retries and fallbacks: retryable failures (429, 5xx,
 * timeouts, dropped connections) are retried with exponential backoff, then
 * the model's `fallbacks` are tried in order. Cancellation is never retried.
 */
import type { ModelDefinition, ModelProvider, ModelRequest, ModelResponse } from '../definitions/types.js';
import { AgentportError, abortError, errorMessage, throwIfAborted } from '../errors.js';
import type { ModelResolver } from './resolveModel.js';

export interface CallModelOptions {
  signal?: AbortSignal;
  /** Base delay of the exponential backoff; tests shorten it. Default 500 ms. */
  retryBaseDelayMs?: number;
  /** Called before a retry or a fallback, with a human-readable reason. */
  onRetry?: (message: string) => void;
}

export interface ModelCallResult {
  response: ModelResponse;
  /** The model that answered (the first one, or a fallback). */
  model: ModelDefinition;
}

const DEFAULT_MAX_RETRIES = 2;

export async function callModel(
  resolver: ModelResolver,
  modelName: string,
  buildRequest: (model: ModelDefinition) => ModelRequest,
  options: CallModelOptions = {},
): Promise<ModelCallResult> {
  const primary = resolver.resolve(modelName);
  const chain = [primary.definition.name, ...(primary.definition.fallbacks ?? [])];
  const failures: string[] = [];
  for (const [index, name] of chain.entries()) {
    let resolved;
    try {
      resolved = index === 0 ? primary : resolver.resolve(name);
    } catch (error) {
      // A fallback that cannot be used (no key) is skipped and reported.
      failures.push(`${name}: ${errorMessage(error)}`);
      continue;
    }
    const maxRetries = resolved.definition.maxRetries ?? DEFAULT_MAX_RETRIES;
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(options.signal);
      try {
        const response = await completeOnce(resolved.provider, buildRequest(resolved.definition), options.signal);
        return { response, model: resolved.definition };
      } catch (error) {
        throwIfAborted(options.signal);
        const retryable = isRetryable(error);
        if (retryable && attempt < maxRetries) {
          const delay = backoff(attempt, options.retryBaseDelayMs ?? 500, retryAfterMs(error));
          options.onRetry?.(`model ${name} failed (${errorMessage(error)}); retrying in ${Math.round(delay)} ms`);
          await sleep(delay, options.signal);
          continue;
        }
        failures.push(`${name}: ${errorMessage(error)}`);
        const next = chain[index + 1];
        if (next) options.onRetry?.(`model ${name} failed (${errorMessage(error)}); trying fallback ${next}`);
        break;
      }
    }
  }
  const [first, ...rest] = failures;
  throw new AgentportError(
    'MODEL_FAILED',
    `model "${modelName}" failed: ${first?.slice(first.indexOf(': ') + 2)}${rest.length ? `; fallbacks failed too (${rest.join('; ')})` : ''}`,
    { failures },
  );
}

/** Calls a signal is handed to providers itself; later calls on it get a linked signal of their own. */
const DIRECT_CALLS = 3;
/** Provider calls made so far with each signal itself. */
const directCalls = new WeakMap<AbortSignal, number>();

/**
 * One provider call. HTTP clients tend to leave a listener on the signal they
 * get, and a run makes many calls on one signal: its first few calls take the
 * run's signal itself (most runs make one or two), later ones a signal of
 * their own linked to it, so the listeners left behind stay few.
 */
async function completeOnce(provider: ModelProvider, request: ModelRequest, signal: AbortSignal | undefined): Promise<ModelResponse> {
  if (!signal) return provider.complete(request, {});
  const direct = directCalls.get(signal) ?? 0;
  if (direct < DIRECT_CALLS) {
    directCalls.set(signal, direct + 1);
    return provider.complete(request, { signal });
  }
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  try {
    return await provider.complete(request, { signal: controller.signal });
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

const NETWORK_ERRORS = new Set(['APIConnectionError', 'APIConnectionTimeoutError', 'AbortError', 'TimeoutError', 'FetchError']);
const NETWORK_CODES = /^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|UND_ERR_\w+)$/;

/**
 * 429, 408, 409 and 5xx responses, and network failures (timeouts, refused or
 * dropped connections). A provider may also mark an error `retryable: true`.
 * Anything else (a bug in a custom provider, a malformed answer) fails at once.
 */
function isRetryable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || error instanceof AgentportError) return false;
  const { status, name, code, retryable, cause } = error as {
    status?: unknown;
    name?: unknown;
    code?: unknown;
    retryable?: unknown;
    cause?: unknown;
  };
  if (retryable === true) return true;
  if (typeof status === 'number') return status === 408 || status === 409 || status === 429 || status >= 500;
  if (typeof name === 'string' && NETWORK_ERRORS.has(name)) return true;
  if (typeof code === 'string' && NETWORK_CODES.test(code)) return true;
  return cause !== undefined && cause !== error && isRetryable(cause);
}

function retryAfterMs(error: unknown): number | undefined {
  const headers = (error as { headers?: { get?: (name: string) => string | null } | Record<string, string> } | null)?.headers;
  const raw =
    typeof headers?.get === 'function' ? headers.get('retry-after') : (headers as Record<string, string> | undefined)?.['retry-after'];
  const seconds = raw ? Number(raw) : NaN;
  return Number.isFinite(seconds) ? seconds * 1000 : undefined;
}

function backoff(attempt: number, baseMs: number, retryAfter: number | undefined): number {
  const exponential = baseMs * 2 ** attempt * (0.75 + Math.random() * 0.5);
  // Honour Retry-After, capped so a host's tool-call timeout is not spent waiting.
  return Math.min(retryAfter ?? exponential, 20_000);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
