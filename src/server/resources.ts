/**
 * Threads and their attachments as MCP resources (URIs in resourceUris.ts):
 *
 * - `resources/templates/list`: the three URI templates (transcript,
 *   messages, attachment);
 * - `resources/list`: the caller's most recent top-level threads (at most
 *   {@link RESOURCE_LIST_LIMIT}, the most recently changed first), each as its
 *   transcript;
 * - `resources/read`: a transcript (markdown), the messages (JSON) or an
 *   attachment (text for text types, base64 `blob` otherwise), redacted
 *   like every other output;
 * - subscriptions: a thread's transcript and messages URIs are updated
 *   whenever a message of it is stored (see Runtime.watchThreads). Over stdio
 *   with `resources/subscribe` (2025-11-25) or `subscriptions/listen`
 *   (2026-07-28); over HTTP with `subscriptions/listen` (2026-07-28, on the
 *   bus the HTTP handler is given). Stateless 2025-11-25 HTTP has no stream
 *   to deliver updates on: there `resources.subscribe` is not declared.
 *
 * Every thread is looked up through the runtime's `visibleThread` (the
 * OAuth owner rule, runtime/run/owner.ts): another subject's thread, an
 * unknown thread, an unknown file and a URI that is not agentport's all
 * answer the same "resource not found" error (JSON-RPC -32602 with
 * `data.uri`, which the SDK sends in both protocol eras).
 */
import {
  ResourceNotFoundError,
  type CallToolResult,
  type ListResourceTemplatesResult,
  type ListResourcesResult,
  type McpRequestContext,
  type ReadResourceResult,
  type Resource,
  type Server,
  type ServerEvent,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { errorMessage, isAgentportError } from '../errors.js';
import { log, redact } from '../log.js';
import type { Runtime } from '../runtime/runtime.js';
import { currentCaller, ownerOf, reachable, visibleTo } from '../runtime/run/owner.js';
import type { RunResult } from '../runtime/types.js';
import { Redactor } from '../runtime/variables/secrets.js';
import type { Store, ThreadRecord } from '../store/types.js';
import { messagesUri, parseResourceUri, producedFiles, threadUri, attachmentUri } from './resourceUris.js';

/** `resources/list` lists at most this many threads. */
const RESOURCE_LIST_LIMIT = 50;
/** Images and audio up to this size are sent inline in a tool result (and always linked). */
const INLINE_MEDIA_MAX_BYTES = 1024 * 1024;
/** At most this many bytes of inline media per result. */
const INLINE_MEDIA_TOTAL_BYTES = 4 * 1024 * 1024;

const RESOURCE_TEMPLATES: ListResourceTemplatesResult['resourceTemplates'] = [
  {
    uriTemplate: 'agentport://threads/{thread_id}',
    name: 'thread',
    title: 'Thread transcript',
    description: 'A conversation (thread) as a markdown transcript: each message with its role, tool calls and attachments.',
    mimeType: 'text/markdown',
  },
  {
    uriTemplate: 'agentport://threads/{thread_id}/messages',
    name: 'thread_messages',
    title: 'Thread messages',
    description: "A thread's messages as JSON, in order (seq), with tool calls, tool results and attachment URIs.",
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'agentport://threads/{thread_id}/attachments/{path}',
    name: 'thread_attachment',
    title: 'Thread attachment',
    description: "A file a tool stored with its result, under the thread's /attachments/ (its MIME type as stored).",
  },
];

/** What one server instance (a stdio connection) is subscribed to. */
interface Watcher {
  server: Server;
  /** A 2026-07-28 connection: the SDK's listen router picks what each subscription asked for. */
  modern: boolean;
  uris: Set<string>;
}

export class ThreadResources {
  /** For `subscriptions/listen` over HTTP (2026-07-28): give it to the HTTP handler. */
  readonly bus = new CallerBus();
  private readonly watchers = new Set<Watcher>();
  private watched: Runtime | undefined;

  constructor(private readonly getRuntime: () => Promise<Runtime>) {}

  /** The `resources` capability of an instance: subscriptions where updates can be delivered. */
  capability(context: McpRequestContext): { subscribe: boolean; listChanged: boolean } {
    return { subscribe: subscribable(context), listChanged: false };
  }

  /** Answers resource requests on this instance (and, on a stdio connection, takes its subscriptions). */
  register(server: Server, context: McpRequestContext): void {
    server.setRequestHandler('resources/list', () => this.list());
    server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
    server.setRequestHandler('resources/read', (request) => this.read(request.params.uri));
    // An HTTP instance serves one request; a stdio one is the connection and can be told of changes.
    if (context.requestInfo) return;
    const watcher: Watcher = { server, modern: context.era === 'modern', uris: new Set() };
    this.watchers.add(watcher);
    const previous = server.onclose;
    server.onclose = () => {
      this.watchers.delete(watcher);
      previous?.();
    };
    if (watcher.modern) return;
    server.setRequestHandler('resources/subscribe', async (request) => {
      await this.mustExist(request.params.uri);
      watcher.uris.add(request.params.uri);
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', (request) => {
      watcher.uris.delete(request.params.uri);
      return {};
    });
  }

  /** Follows the runtime's message writes (once the runtime exists). */
  attach(runtime: Runtime): void {
    if (this.watched) return;
    this.watched = runtime;
    runtime.watchThreads?.((threadId) => this.changed(runtime.store, threadId));
  }

  async list(): Promise<ListResourcesResult> {
    const runtime = await this.getRuntime();
    const threads = (await runtime.store.listThreads())
      .filter((thread) => !thread.parentId && visibleTo(thread))
      .sort((a, b) => compareDesc(a.updatedAt, b.updatedAt) || compareDesc(a.createdAt, b.createdAt))
      .slice(0, RESOURCE_LIST_LIMIT);
    return { resources: threads.map(listed) };
  }

  async read(uri: string): Promise<ReadResourceResult> {
    const target = parseResourceUri(uri);
    if (!target) throw new ResourceNotFoundError(uri);
    const runtime = await this.getRuntime();
    const thread = await runtime.visibleThread(target.threadId);
    if (!thread) throw new ResourceNotFoundError(uri);
    const { store } = runtime;
    const hide = await redactorFor(store, thread.id);
    if (target.kind === 'attachment') {
      const file = await readIfValid(store, thread.id, target.path);
      if (!file) throw new ResourceNotFoundError(uri);
      const text = asText(file.ref.mimeType, file.data);
      return {
        contents: [
          text === undefined
            ? { uri, mimeType: file.ref.mimeType, blob: Buffer.from(file.data).toString('base64') }
            : { uri, mimeType: file.ref.mimeType, text: hide(text) },
        ],
      };
    }
    const messages = await store.listMessages(thread.id);
    // Loaded when a thread is first read: a server that is never asked does not load it.
    const { messagesDocument, renderTranscript } = await import('./transcript.js');
    if (target.kind === 'messages') {
      return { contents: [{ uri, mimeType: 'application/json', text: hide(JSON.stringify(messagesDocument(thread, messages), null, 2)) }] };
    }
    return { contents: [{ uri, mimeType: 'text/markdown', text: hide(renderTranscript(thread, messages)) }] };
  }

  /** Resolves when the URI names a resource the caller can read; otherwise throws "not found". */
  private async mustExist(uri: string): Promise<void> {
    const target = parseResourceUri(uri);
    if (!target) throw new ResourceNotFoundError(uri);
    const runtime = await this.getRuntime();
    const thread = await runtime.visibleThread(target.threadId);
    if (!thread) throw new ResourceNotFoundError(uri);
    if (target.kind === 'attachment' && !(await readIfValid(runtime.store, thread.id, target.path))) throw new ResourceNotFoundError(uri);
  }

  /** A message of the thread was stored: its transcript and messages changed. */
  private changed(store: Store, threadId: string): void {
    // Every message a run stores passes here: with nobody subscribed (the usual case) it costs nothing.
    if (!this.bus.listening && ![...this.watchers].some((watcher) => watcher.modern || watcher.uris.size > 0)) return;
    const uris = [threadUri(threadId), messagesUri(threadId)];
    for (const watcher of this.watchers) {
      for (const uri of uris) {
        if (!watcher.modern && !watcher.uris.has(uri)) continue;
        watcher.server
          .sendResourceUpdated({ uri })
          .catch((error: unknown) => log.warn(`resource update notification failed: ${errorMessage(error)}`));
      }
    }
    if (!this.bus.listening) return;
    // Over HTTP, subscribers are told only of their own threads (an id alone must not leak activity).
    void store.getThread(threadId).then(
      (thread) => {
        for (const uri of uris) this.bus.publishFor(ownerOf(thread), { kind: 'resource_updated', uri });
      },
      // Whose thread it is cannot be known: nobody is told, rather than everybody.
      (error: unknown) =>
        log.warn(`resource updates of thread ${threadId} not sent: its record could not be read (${errorMessage(error)})`),
    );
  }
}

/**
 * Where resource updates can reach the client: a stdio connection (either
 * era), and 2026-07-28 HTTP clients through `subscriptions/listen`.
 */
function subscribable(context: McpRequestContext): boolean {
  return !context.requestInfo || context.era === 'modern';
}

function listed(thread: ThreadRecord): Resource {
  return {
    uri: threadUri(thread.id),
    name: `${thread.prompt}/${thread.id}`,
    title: `${thread.prompt} (${thread.status})`,
    description: `Conversation with ${thread.prompt}, started ${thread.createdAt}. Its messages as JSON: ${messagesUri(thread.id)}`,
    mimeType: 'text/markdown',
    annotations: { lastModified: thread.updatedAt },
  };
}

function compareDesc(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

/**
 * Redaction for what is read from a thread: every secret this process knows
 * (log.ts), and the thread's own secret variables (stored messages are
 * redacted already; this covers a thread written before a restart). Variables
 * the store cannot read fail the read with its error: the text is not served
 * without their secrets hidden.
 */
async function redactorFor(store: Store, threadId: string): Promise<(text: string) => string> {
  const redactor = new Redactor();
  for (const variable of await store.getVariables(threadId)) if (variable.secret) redactor.add(variable.value);
  return (text) => redactor.text(redact(text));
}

/** A file of the thread; undefined when it is not there or its path is not one a thread can hold. Other failures are thrown. */
function readIfValid(store: Store, threadId: string, path: string): ReturnType<Store['readFile']> {
  return store.readFile(threadId, path).catch((error: unknown) => {
    if (isAgentportError(error) && error.code === 'INVALID_PATH') return undefined;
    throw error;
  });
}

const TEXT_TYPES =
  /^(text\/|application\/(json|ld\+json|xml|yaml|x-yaml|javascript|x-javascript|csv|x-ndjson|sql|graphql|toml)\b)|\+(json|xml)\b/i;

/** The file's text when its type is textual and it is valid UTF-8; otherwise undefined (sent as a blob). */
function asText(mimeType: string, data: Uint8Array): string | undefined {
  if (!TEXT_TYPES.test(mimeType)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

/**
 * A run's result with its media inline: each image or audio file the run
 * produced, up to {@link INLINE_MEDIA_MAX_BYTES}, as image or audio content
 * right after the text (the `resource_link` for every produced file is
 * already in the result, see toolResults.ts).
 */
export async function withInlineMedia(result: CallToolResult, run: RunResult, store: Store): Promise<CallToolResult> {
  const media = producedFiles(run).filter(
    (file) =>
      /^(image|audio)\//.test(file.mimeType ?? '') && attachmentUri(run.threadId, file.path) && (file.size ?? 0) <= INLINE_MEDIA_MAX_BYTES,
  );
  if (media.length === 0) return result;
  const blocks: CallToolResult['content'] = [];
  let budget = INLINE_MEDIA_TOTAL_BYTES;
  for (const file of media) {
    // The result stands without it (its resource_link leads to the file, whose read reports the store's error).
    const read = await store.readFile(run.threadId, file.path).catch((error: unknown) => {
      log.warn(`${file.path} of thread ${run.threadId} was not sent inline: ${errorMessage(error)}`);
      return undefined;
    });
    if (!read || read.data.byteLength > INLINE_MEDIA_MAX_BYTES || read.data.byteLength > budget) continue;
    budget -= read.data.byteLength;
    const data = Buffer.from(read.data).toString('base64');
    blocks.push(
      read.ref.mimeType.startsWith('image/')
        ? { type: 'image', data, mimeType: read.ref.mimeType }
        : { type: 'audio', data, mimeType: read.ref.mimeType },
    );
  }
  if (blocks.length === 0) return result;
  const [first, ...rest] = result.content;
  return { ...result, content: first ? [first, ...blocks, ...rest] : blocks };
}

/**
 * The event bus of `subscriptions/listen` streams over HTTP. A stream is
 * opened inside its request, so it knows the caller (runtime/run/owner.ts);
 * a thread's updates reach only the streams of callers that may see it.
 * Events published without an owner (`publish`, the SDK's own notifier)
 * reach every stream.
 */
export class CallerBus implements ServerEventBus {
  private readonly listeners = new Map<(event: ServerEvent) => void, string | undefined>();

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  publish(event: ServerEvent): void {
    for (const listener of [...this.listeners.keys()]) deliver(listener, event);
  }

  publishFor(owner: string | undefined, event: ServerEvent): void {
    for (const [listener, caller] of [...this.listeners]) if (reachable(owner, caller)) deliver(listener, event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    this.listeners.set(listener, currentCaller());
    return () => {
      this.listeners.delete(listener);
    };
  }
}

function deliver(listener: (event: ServerEvent) => void, event: ServerEvent): void {
  try {
    listener(event);
  } catch (error) {
    log.warn(`resource update notification failed: ${errorMessage(error)}`);
  }
}
