/**
 * The SDK's low-level `Server`, letting a `tools/call` answer with an MCP
 * task. The SDK checks every `tools/call` result against the core
 * `CallToolResult` schema, which strips the task's fields; a task result
 * (`resultType: "task"`, the Tasks extension's shape) is passed on as it is,
 * through the subclass hook the SDK provides for wrapping handlers.
 */
import { Server } from '@modelcontextprotocol/server';

class TaskResult {
  constructor(readonly result: Record<string, unknown>) {}
}

/** A task result thrown past the check is the handler's result; anything else is still thrown. */
function passTaskResult(error: unknown): Record<string, unknown> {
  if (error instanceof TaskResult) return error.result;
  throw error;
}

export class TaskAwareServer extends Server {
  protected override _wrapHandler(method: string, handler: Parameters<Server['_wrapHandler']>[1]): ReturnType<Server['_wrapHandler']> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      // Thrown past the SDK's result check, caught just below.
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- a result carried past the check, not an error
      if (result.resultType === 'task') throw new TaskResult(result);
      return result;
    });
    return (request, ctx) => checked(request, ctx).catch(passTaskResult);
  }
}
