/**
 * Token usage and cost. Each model call's usage comes from the provider's
 * answer (`usage` of a Chat Completion); its cost from the answering model's
 * prices, in US dollars per million tokens (`inputPrice`, `outputPrice`,
 * `cachedPrice` for cached input, which defaults to `inputPrice`). A call of
 * a model without prices counts tokens but no cost.
 */
import type { ModelDefinition, ModelResponse } from '../definitions/types.js';

export interface Usage {
  /** Model calls counted. */
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those the provider served from its cache. */
  cachedTokens: number;
  /** US dollars, for the calls whose model has prices. */
  costUsd?: number;
  /** Calls whose model has no prices (their cost is not in costUsd). */
  unpricedCalls?: number;
}

export const NO_USAGE: Usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0 };

/** The usage of one model call. */
export function callUsage(response: ModelResponse, model: ModelDefinition): Usage {
  const input = response.usage?.promptTokens ?? 0;
  const output = response.usage?.completionTokens ?? 0;
  const cached = Math.min(response.usage?.cachedTokens ?? 0, input);
  const usage: Usage = { modelCalls: 1, inputTokens: input, outputTokens: output, cachedTokens: cached };
  if (model.inputPrice === undefined || model.outputPrice === undefined) return { ...usage, unpricedCalls: 1 };
  const cost =
    ((input - cached) * model.inputPrice + cached * (model.cachedPrice ?? model.inputPrice) + output * model.outputPrice) / 1_000_000;
  return { ...usage, costUsd: cost };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    modelCalls: a.modelCalls + b.modelCalls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
  };
  if (a.costUsd !== undefined || b.costUsd !== undefined) sum.costUsd = roundUsd((a.costUsd ?? 0) + (b.costUsd ?? 0));
  const unpriced = (a.unpricedCalls ?? 0) + (b.unpricedCalls ?? 0);
  if (unpriced) sum.unpricedCalls = unpriced;
  return sum;
}

/** Sums usages (a thread's, from its messages). */
export function totalUsage(usages: Iterable<Usage>): Usage {
  let total = NO_USAGE;
  for (const usage of usages) total = addUsage(total, usage);
  return total;
}

/** Whether a value read back from a message's meta is a usage record. */
export function isUsage(value: unknown): value is Usage {
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return ['modelCalls', 'inputTokens', 'outputTokens', 'cachedTokens'].every((key) => typeof usage[key] === 'number');
}

/** One line for logs: "1,234 input tokens (200 cached), 56 output tokens, $0.0012". */
export function describeUsage(usage: Usage): string {
  const cached = usage.cachedTokens ? ` (${usage.cachedTokens} cached)` : '';
  const cost = usage.costUsd !== undefined ? `, $${usage.costUsd.toFixed(6)}` : '';
  return `${usage.inputTokens} input tokens${cached}, ${usage.outputTokens} output tokens${cost}`;
}

// Sums of many small floats: kept to a millionth of a cent.
function roundUsd(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
