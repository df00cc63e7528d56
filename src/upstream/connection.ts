/**
 * One upstream server, as one SDK v2 client shared by every run of the
 * process. Connects on first use; keeps the tool list (all pages) until the
 * server says `notifications/tools/list_changed`; after a crash or a broken
 * connection the next use reconnects, with an exponential backoff between
 * failed attempts. Every failure is an AgentportError (UPSTREAM_UNAVAILABLE
 * or UPSTREAM_FAILED) whose message is safe to show: secrets are redacted.
 */
import type { CallToolResult, Client, Tool } from '@modelcontextprotocol/client';
import { AgentportError, abortError, errorMessage, throwIfAborted } from '../errors.js';
import type { UpstreamServerConfig } from './config.js';
import type { UpstreamSecrets } from './secrets.js';
import { createClient } from './transport.js';

/** Backoff after the n-th failure in a row: 0.5 s, 1 s, 2 s, ... up to 30 s. */
export function backoffMs(failures: number): number {
  return failures <= 0 ? 0 : Math.min(30_000, 500 * 2 ** (failures - 1));
}
/** A use that finds the server in its backoff waits this long at most, then tries; longer, it fails at once. */
const MAX_BACKOFF_WAIT_MS = 2_000;
/** Connecting (a spawn, a handshake) and listing may take this long, or the server's timeoutMs when longer. */
const SETUP_TIMEOUT_MS = 30_000;
/** Lines of a stdio server's stderr kept, to explain a failure. */
const STDERR_LINES = 20;

export type ConnectionState = 'not connected' | 'connecting' | 'ready' | 'failed' | 'closed';

export interface CallOptions {
  signal?: AbortSignal;
  /** Per call, overriding the server's timeoutMs. */
  timeoutMs?: number;
  /** Progress the upstream server reports: a human line, and its numbers. */
  onProgress?: (message: string, progress: { progress: number; total?: number }) => void;
  /** The tool's definition (output validation, header mirroring). */
  definition?: Tool;
}

export class UpstreamConnection {
  private client: Client | undefined;
  private opening: Promise<Client> | undefined;
  private tools: Tool[] | undefined;
  private listing: Promise<Tool[]> | undefined;
  /** A list fetched again after list_changed: uses wait for it, so they see the new list. */
  private refreshing: Promise<void> | undefined;
  private failures = 0;
  private retryAt = 0;
  private closed = false;
  private stderrTail: string[] = [];
  private stderrPartial = '';
  /** Why the last attempt failed (redacted). */
  lastError: string | undefined;
  /** Bumped whenever the tool list changes. */
  generation = 0;
  protocolVersion: string | undefined;

  constructor(
    readonly config: UpstreamServerConfig,
    private readonly options: {
      secrets: UpstreamSecrets;
      log: (line: string) => void;
      /** Called with the first list and whenever it changes (list_changed, or different after a reconnect). */
      onToolsChanged: (tools: Tool[]) => void;
    },
  ) {}

  get name(): string {
    return this.config.name;
  }

  private get setupTimeoutMs(): number {
    return Math.max(this.config.timeoutMs, SETUP_TIMEOUT_MS);
  }

  get state(): ConnectionState {
    if (this.closed) return 'closed';
    if (this.client) return 'ready';
    if (this.opening) return 'connecting';
    return this.lastError ? 'failed' : 'not connected';
  }

  /** The tool list last fetched (undefined before the first). */
  get cachedTools(): Tool[] | undefined {
    return this.tools;
  }

  /**
   * The server's tools (every page), fetched once and kept until the server says they changed.
   * @param wait false: in a backoff after failures, fail at once instead of waiting it out
   */
  async listTools(signal?: AbortSignal, wait = true): Promise<Tool[]> {
    if (this.refreshing) await raceSignal(this.refreshing, signal);
    if (this.tools) return this.tools;
    return raceSignal((this.listing ??= this.fetchTools(wait).finally(() => (this.listing = undefined))), signal);
  }

  private async fetchTools(wait: boolean): Promise<Tool[]> {
    const client = await this.connect(wait);
    let tools: Tool[];
    try {
      ({ tools } = await client.listTools(undefined, { cacheMode: 'refresh', timeout: this.setupTimeoutMs }));
    } catch (error) {
      this.broken(client, error);
      throw this.unavailable(`listing its tools failed: ${this.describe(error)}`);
    }
    this.failures = 0;
    this.setTools(tools);
    return tools;
  }

  private setTools(tools: Tool[]): void {
    const previous = this.tools;
    this.tools = tools;
    if (previous && JSON.stringify(previous) === JSON.stringify(tools)) return;
    this.generation += 1;
    this.options.onToolsChanged(tools);
  }

  /** Calls a tool by its upstream name. Resolves with the upstream result, `isError` ones included. */
  async call(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    const { signal } = options;
    throwIfAborted(signal);
    const client = await raceSignal(this.connect(), signal);
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    try {
      const result = await client.callTool(
        { name: tool, arguments: args },
        {
          timeout: timeoutMs,
          ...(signal ? { signal } : {}),
          ...(options.definition ? { toolDefinition: options.definition } : {}),
          ...(options.onProgress
            ? {
                onprogress: (progress: { progress: number; total?: number; message?: string }) =>
                  options.onProgress!(
                    this.options.secrets.text(progress.message ?? `${progress.progress}${progress.total ? ` of ${progress.total}` : ''}`),
                    {
                      progress: progress.progress,
                      ...(progress.total !== undefined ? { total: progress.total } : {}),
                    },
                  ),
              }
            : {}),
        },
      );
      this.failures = 0;
      return result;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      throw this.callFailure(client, tool, error, timeoutMs);
    }
  }

  /** Connects (or reuses the connection). Waits out a short backoff (unless `wait` is false); a long one fails at once. */
  connect(wait = true): Promise<Client> {
    if (this.closed) return Promise.reject(this.unavailable('agentport is shutting down'));
    if (this.client) return Promise.resolve(this.client);
    if (!wait && this.retryAt > Date.now())
      return Promise.reject(
        this.unavailable(`${this.lastError ?? 'the last attempt failed'}; the next attempt is in ${seconds(this.retryAt - Date.now())}`),
      );
    return (this.opening ??= this.open().finally(() => (this.opening = undefined)));
  }

  private async open(): Promise<Client> {
    const wait = this.retryAt - Date.now();
    if (wait > MAX_BACKOFF_WAIT_MS) {
      throw this.unavailable(`${this.lastError ?? 'the last attempt failed'}; the next attempt is in ${seconds(wait)}`);
    }
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.stderrTail = [];
    const reconnect = this.generation > 0;
    let client: Client | undefined;
    try {
      const parts = await createClient(this.config, {
        onToolsChanged: () => {
          if (client && client === this.client) this.refreshTools(client);
        },
        onStderr: (text) => this.stderr(text),
      });
      client = parts.client;
      const opened = client;
      client.onclose = () => this.closedUnderneath(opened);
      client.onerror = () => {};
      await client.connect(parts.transport, { timeout: this.setupTimeoutMs });
    } catch (error) {
      await client?.close().catch(() => {});
      // What a server that exited at once printed may still be on its way through the pipe.
      if (this.config.transport === 'stdio') await new Promise((resolve) => setTimeout(resolve, 50));
      this.failed(this.describe(error));
      throw this.unavailable(this.lastError!);
    }
    if (this.closed) {
      await client.close().catch(() => {});
      throw this.unavailable('agentport is shutting down');
    }
    this.client = client;
    this.lastError = undefined;
    this.protocolVersion = client.getNegotiatedProtocolVersion();
    this.options.log(`upstream server ${this.name}: connected (${this.config.transport}, protocol ${this.protocolVersion ?? 'unknown'})`);
    // A restarted server may have other tools: checked in the background.
    if (reconnect && this.tools) this.refreshTools(client);
    return client;
  }

  private failed(reason: string): void {
    this.failures += 1;
    this.retryAt = Date.now() + backoffMs(this.failures);
    this.lastError = reason;
  }

  private refreshTools(client: Client): void {
    const refreshing = client
      .listTools(undefined, { cacheMode: 'refresh', timeout: this.setupTimeoutMs })
      .then(({ tools }) => {
        if (client === this.client) this.setTools(tools);
      })
      .catch((error: unknown) => {
        // The list is fetched again on the next use.
        if (client === this.client) this.tools = undefined;
        this.options.log(`upstream server ${this.name}: refreshing its tools failed: ${this.describe(error)}`);
      })
      .finally(() => {
        if (this.refreshing === refreshing) this.refreshing = undefined;
      });
    this.refreshing = refreshing;
  }

  /** The connection ended without agentport closing it: a crash, or the server went away. */
  private closedUnderneath(client: Client): void {
    if (client !== this.client) return;
    this.client = undefined;
    if (this.closed) return;
    this.failed(`the connection closed${this.stderrNote()}`);
    this.options.log(`upstream server ${this.name}: the connection closed${this.stderrNote()}; it reconnects on the next use`);
  }

  /** A transport failure (not an answer): this client is dropped, the next use reconnects. */
  private broken(client: Client, error: unknown): void {
    if (isAnswer(error) || client !== this.client) return;
    this.client = undefined;
    this.failed(this.describe(error));
    void client.close().catch(() => {});
  }

  private callFailure(client: Client, tool: string, error: unknown, timeoutMs: number): AgentportError {
    const code = (error as { code?: unknown }).code;
    const data = { server: this.name, tool };
    if (code === 'REQUEST_TIMEOUT') {
      return new AgentportError(
        'UPSTREAM_FAILED',
        `${tool} on upstream server ${this.name} did not answer within ${seconds(timeoutMs)}: the call was cancelled`,
        { ...data, reason: 'timeout' },
      );
    }
    if (code === 'CONNECTION_CLOSED') {
      return new AgentportError(
        'UPSTREAM_FAILED',
        `upstream server ${this.name} closed the connection during the call of ${tool}${this.stderrNote()}; it is restarted on the next call`,
        { ...data, reason: 'closed' },
      );
    }
    if (typeof code === 'number') {
      return new AgentportError(
        'UPSTREAM_FAILED',
        `${tool} on upstream server ${this.name} answered with an error: ${this.options.secrets.text(errorMessage(error))} (MCP error ${code})`,
        { ...data, reason: 'protocol', mcpCode: code },
      );
    }
    this.broken(client, error);
    return new AgentportError(
      'UPSTREAM_FAILED',
      `calling ${tool} on upstream server ${this.name} failed: ${this.describe(error)}; it reconnects on the next call`,
      { ...data, reason: 'transport' },
    );
  }

  private unavailable(reason: string): AgentportError {
    return new AgentportError('UPSTREAM_UNAVAILABLE', `upstream server ${this.name} is unavailable: ${reason}`, { server: this.name });
  }

  private describe(error: unknown): string {
    let message = errorMessage(error);
    // "fetch failed" says little: the causes under it say why (ECONNREFUSED, a DNS failure, ...).
    let cause = (error as { cause?: unknown }).cause;
    for (let depth = 0; cause instanceof Error && depth < 3; depth++, cause = (cause as { cause?: unknown }).cause) {
      if (cause.message && !message.includes(cause.message)) message += `: ${cause.message}`;
    }
    return this.options.secrets.text(message) + (this.config.transport === 'stdio' && !message.includes('stderr') ? this.stderrNote() : '');
  }

  private stderr(text: string): void {
    const lines = (this.stderrPartial + text).split('\n');
    this.stderrPartial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      const safe = this.options.secrets.text(line);
      this.stderrTail.push(safe);
      if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
      this.options.log(`[upstream ${this.name}] ${safe}`);
    }
  }

  /** The line of the server's recent stderr that most likely says what went wrong. */
  private stderrNote(): string {
    const telling = this.stderrTail.findLast((line) =>
      /error|exception|fatal|cannot|can't|failed|denied|not found|refused|invalid|missing/i.test(line),
    );
    const line = telling ?? this.stderrTail.at(-1);
    return line ? ` (its stderr said: ${line.trim()})` : '';
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.opening?.catch(() => undefined));
    this.client = undefined;
    await client?.close().catch(() => {});
  }
}

/** A JSON-RPC error answer (the server is fine) or a timeout (the request is cancelled, the connection stays). */
function isAnswer(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' || code === 'REQUEST_TIMEOUT' || code === 'INVALID_RESULT';
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** `work`, or the signal's abort error when it aborts first (the work goes on, shared). */
async function raceSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  throwIfAborted(signal);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
    aborted.catch(() => {});
  }
}
