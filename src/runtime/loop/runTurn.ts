/**
 * One turn of one side: steps until the side's stop condition. The loop only
 * dispatches; each phase lives in its own module: queued work (queue.ts),
 * the model call (modelStep.ts), storing (storeMessage.ts), tool calls in
 * order (toolCalls.ts), stop conditions (stop.ts).
 */
import { AgentportError, throwIfAborted } from '../../errors.js';
import { addUsage } from '../../models/usage.js';
import type { StoredToolCall } from '../../store/types.js';
import type { Run, Side } from '../run/types.js';
import { threadState } from '../state/threadState.js';
import { modelStep } from './modelStep.js';
import { deliverQueued } from './queue.js';
import { stopAfterTools, stopRequested, type TurnEnd } from './stop.js';
import { storeMessage } from './storeMessage.js';
import { executeToolCalls } from './toolCalls.js';

/** How often a model that ignores toolChoice "required" is asked again. */
const REQUIRED_TOOL_RETRIES = 2;

export async function runTurn(run: Run, side: Side): Promise<TurnEnd> {
  const def = side.prompt.definition;
  run.execution.beginTurn(side.key);
  let steps = 0;
  let calledTool = false;
  let requiredRetries = 0;
  let lastText: string | null = null;

  for (;;) {
    const queuedEnd = stopAfterTools(run, run.queue.length > 0 ? await deliverQueued(run, side) : [], lastText);
    if (queuedEnd) return queuedEnd;
    if (steps >= side.maxSteps) {
      throw new AgentportError('STEP_LIMIT', `${side.label} took ${side.maxSteps} steps in one turn without finishing it`, {
        side: side.key,
        maxSteps: side.maxSteps,
      });
    }
    throwIfAborted(run.signal);
    steps += 1;
    run.tally.steps += 1;
    run.execution.countStep();
    const state = threadState(run, side);
    run.progress(`${side.label}: step ${steps}, calling the model`);

    const requireTool = def.toolChoice === 'required' && !calledTool && side.toolset.length > 0;
    const response = await modelStep(run, side, state, { step: steps, requireTool, insistOnTool: requireTool && requiredRetries > 0 });
    run.tally.usage = addUsage(run.tally.usage, response.usage);
    if (requireTool && response.toolCalls.length === 0) {
      if (requiredRetries < REQUIRED_TOOL_RETRIES) {
        requiredRetries += 1;
        run.progress(`${side.label}: the model answered without calling a tool; asking again (toolChoice "required")`);
        continue;
      }
      throw new AgentportError(
        'TOOL_REQUIRED',
        `the model answered without calling a tool ${REQUIRED_TOOL_RETRIES + 1} times although toolChoice is "required"`,
      );
    }

    const toolCalls: StoredToolCall[] = response.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
    await storeMessage(run, side, state, {
      role: 'assistant',
      content: response.text,
      ...(toolCalls.length ? { toolCalls } : {}),
      ...(response.reasoning && def.reasoning?.include ? { reasoning: response.reasoning } : {}),
      // Kept with the step's message: a thread's usage is the sum over its messages, at no extra write.
      meta: { usage: response.usage },
    });
    if (response.text) lastText = run.redactor.text(response.text);

    if (toolCalls.length === 0) {
      const reasoning = response.reasoning && !def.reasoning?.exclude ? { reasoning: run.redactor.text(response.reasoning) } : {};
      const text = run.redactor.text(response.text ?? '');
      // A stop or forced turn asked for during this step (by a hook) wins over the plain answer.
      const requested = stopRequested(run, text);
      if (requested) return { ...requested, ...reasoning };
      if (side.stopOnResponse) return { reason: 'response', response: text, ...reasoning };
      continue;
    }
    calledTool = true;
    const signals = await executeToolCalls(run, side, toolCalls);
    const end = stopAfterTools(run, signals, lastText);
    if (end) return end;
  }
}
