/**
 * The model call of one step: assemble the context, build the request in the
 * model's wire format, call it with retries and fallbacks, and keep the host
 * informed with heartbeats while it is slow.
 */
import type { ModelResponse, ThreadState } from '../../definitions/types.js';
import { callModel } from '../../models/callModel.js';
import { callUsage, type Usage } from '../../models/usage.js';
import { buildModelRequest } from '../../models/request.js';
import { withHeartbeat } from '../heartbeat.js';
import { offeredNow } from '../subagents/registry.js';
import type { Run, Side } from '../run/types.js';
import { assembleContext } from './context.js';
import { joinUpstreamTools } from '../tools/upstreamTools.js';

/** A model's answer with the call's usage and cost (see models/usage.ts). */
export type StepResponse = Omit<ModelResponse, 'usage'> & { usage: Usage };

export async function modelStep(
  run: Run,
  side: Side,
  state: ThreadState,
  options: { step: number; requireTool: boolean; insistOnTool: boolean },
): Promise<StepResponse> {
  const { services } = run;
  const prompt = side.prompt.definition;
  // Tools of upstream MCP servers join (connecting on first use) before the model is offered tools.
  if (run.services.upstream && side.prompt.definition.tools?.length) await joinUpstreamTools(run, side);
  const messages = await assembleContext(run, side, state, options.insistOnTool);
  const { response, model } = await withHeartbeat(
    callModel(
      services.models,
      prompt.model,
      (model) =>
        buildModelRequest({
          model,
          prompt,
          messages,
          tools: side.deferred.offered().filter((tool) => offeredNow(run, tool, side)),
          requireTool: options.requireTool,
        }),
      {
        signal: run.signal,
        ...(services.retryBaseDelayMs !== undefined ? { retryBaseDelayMs: services.retryBaseDelayMs } : {}),
        onRetry: (message) => run.progress(`${side.label}: ${message}`),
      },
    ),
    services.heartbeatMs,
    (seconds) => run.progress(`${side.label}: step ${options.step}, still waiting for the model (${seconds} s)`),
  );
  return { ...response, usage: callUsage(response, model) };
}
