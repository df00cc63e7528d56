/**
 * What `agentport run` prints when the run ends: the answer on stdout and a
 * one-line summary on stderr, or with `--json` one object on stdout.
 */
import type { ErrorInfo } from '../../errors.js';
import type { Usage } from '../../models/usage.js';
import type { RunResult, ToolCallRecord } from '../../runtime/types.js';

/** `--json`: `{ thread_id, response, steps, tool_calls, usage?, data?, error? }`. */
export interface RunJson {
  thread_id: string;
  response: string;
  steps: number;
  tool_calls: ToolCallRecord[];
  usage?: Usage;
  /** The answer parsed, for a prompt with a responseSchema (or Prompty outputs). */
  data?: Record<string, unknown>;
  error?: ErrorInfo;
}

export function runJson(threadId: string, result: RunResult | undefined, error: ErrorInfo | undefined): RunJson {
  const failure = error ?? result?.error;
  return {
    thread_id: threadId,
    response: result?.text ?? '',
    steps: result?.steps ?? 0,
    tool_calls: result?.toolCalls ?? [],
    ...(result?.usage ? { usage: result.usage } : {}),
    ...(result?.data ? { data: result.data } : {}),
    ...(failure ? { error: failure } : {}),
  };
}

/** `thread … · 2 steps · 1 tool call · 30 tokens in, 10 out · 1.4s`. */
export function summaryLine(threadId: string, result: RunResult | undefined, elapsed: string): string {
  const parts = [`thread ${threadId}`];
  if (result) {
    parts.push(plural(result.steps, 'step'), plural(result.toolCalls.length, 'tool call'));
    if (result.usage && result.usage.modelCalls > 0) {
      const cost = result.usage.costUsd !== undefined ? `, $${result.usage.costUsd.toFixed(4)}` : '';
      parts.push(`${result.usage.inputTokens} tokens in, ${result.usage.outputTokens} out${cost}`);
    }
  }
  parts.push(elapsed);
  return parts.join(' · ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
