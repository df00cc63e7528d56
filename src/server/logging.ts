/**
 * MCP logging: run events (each step, each tool call, the end of a run, tool
 * failures and run errors) as `notifications/message` from the logger
 * `agentport`, sent as notifications related to the call, so they reach
 * the client over stateless HTTP too.
 *
 * Which levels a client gets:
 * - 2026-07-28 clients say it per request, in `_meta`
 *   (`io.modelcontextprotocol/logLevel`); a request without it gets no log
 *   messages (as the SDK does for that era).
 * - 2025-11-25 clients use `logging/setLevel`; until they do, agentport
 *   sends none (the spec leaves the default to the server: a message per
 *   step costs every call a notification nobody asked for, and progress
 *   notifications already say what a run does), as for 2026-07-28 clients.
 *   Over stdio the level belongs to the connection. Legacy HTTP is
 *   stateless (each request has a server of its own), so the level is kept
 *   here, per authenticated client when the request carries one, otherwise
 *   one for every legacy HTTP client.
 */
import { describeUsage } from '../models/usage.js';
import {
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type McpRequestContext,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { errorMessage, type ErrorInfo } from '../errors.js';
import { log, redact } from '../log.js';
import type { RunResult } from '../runtime/types.js';

const LOGGER_NAME = 'agentport';

const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Levels set with `logging/setLevel`, by client. */
export class LogLevels {
  private readonly byClient = new Map<string, LoggingLevel>();
  set(client: string, level: LoggingLevel): void {
    this.byClient.set(client, level);
  }
  get(client: string): LoggingLevel | undefined {
    return this.byClient.get(client);
  }
}

/**
 * Logging for one server instance (a stdio connection, or one HTTP request).
 * @param shared the levels of stateless HTTP clients, kept across instances
 */
export class InstanceLogging {
  private readonly levels: LogLevels;
  private readonly client: string;

  constructor(
    private readonly context: McpRequestContext,
    shared: LogLevels,
  ) {
    // serveStdio gives no requestInfo: the instance is the connection, and so is its level.
    this.levels = context.requestInfo ? shared : new LogLevels();
    this.client = clientKey(context);
  }

  /** Replaces the SDK's own handler, which keeps the level on an instance a stateless request throws away. */
  register(server: Server): void {
    server.setRequestHandler('logging/setLevel', (request) => {
      this.levels.set(this.client, request.params.level);
      return {};
    });
  }

  /** A logger for the run behind this request, or undefined when the client wants none. */
  runLog(ctx: ServerContext, tool: string): RunLog | undefined {
    // The SDK types the envelope as an empty object: its keys are read as plain record entries.
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const threshold = this.context.era === 'modern' ? levelOf(envelope?.[LOG_LEVEL_META_KEY]) : this.levels.get(this.client);
    if (!threshold) return undefined;
    return new RunLog(ctx, tool, threshold);
  }
}

/** Sends one run's events to the client that called it. */
export class RunLog {
  threadId: string | undefined;

  constructor(
    private readonly ctx: ServerContext,
    private readonly tool: string,
    private readonly threshold: LoggingLevel,
  ) {}

  /** Sends the message when its level passes the threshold; returns whether it was sent. */
  send(level: LoggingLevel, message: string, extra: Record<string, unknown> = {}): boolean {
    if (SEVERITY.indexOf(level) < SEVERITY.indexOf(this.threshold)) return false;
    // Run messages are redacted by the run; this catches anything else a secret of this process could be in.
    const data = { tool: this.tool, ...(this.threadId ? { thread_id: this.threadId } : {}), message: redact(message), ...extra };
    this.ctx.mcpReq
      .notify({ method: 'notifications/message', params: { level, logger: LOGGER_NAME, data } })
      .catch((error: unknown) => log.warn(`log notification failed: ${errorMessage(error)}`));
    return true;
  }

  /** How the run ended: tool failures as warnings, the run's error as an error, otherwise a short summary. */
  ended(result: RunResult): boolean {
    let sent = false;
    for (const call of result.toolCalls) {
      if (call.status === 'error') sent = this.send('warning', `tool ${call.name} failed: ${call.error ?? 'no reason given'}`) || sent;
    }
    if (result.error) return this.failed(result.error) || sent;
    const calls = result.toolCalls.length;
    const usage = result.usage ? `; ${describeUsage(result.usage)}` : '';
    return (
      this.send(
        'info',
        `finished after ${result.steps} step${result.steps === 1 ? '' : 's'} and ${calls} tool call${calls === 1 ? '' : 's'}${usage}`,
      ) || sent
    );
  }

  failed(error: ErrorInfo): boolean {
    return this.send('error', error.message, { code: error.code });
  }
}

function levelOf(value: unknown): LoggingLevel | undefined {
  return SEVERITY.find((level) => level === value);
}

/**
 * Who a legacy HTTP request comes from, as far as the request tells: the
 * token's subject or client when authentication provides one.
 */
function clientKey(context: McpRequestContext): string {
  const auth = context.authInfo;
  const subject = auth?.extra?.sub;
  return typeof subject === 'string' ? `sub:${subject}` : auth?.clientId ? `client:${auth.clientId}` : '';
}
