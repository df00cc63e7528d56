/**
 * The ThreadState tools and hooks receive: the specification's members over
 * one run (its thread, variables, message cache, execution state). One object
 * is made per step or tool call; it is cheap, everything lives on the run.
 */
import type {
  AgentDefinition,
  ExecutionState,
  FileRecord,
  GetMessagesOptions,
  MessageUpdate,
  ModelDefinition,
  NewThreadMessage,
  PromptDefinition,
  ThreadMessage,
  SubagentRegistryEntry,
  ThreadState,
  ThreadView,
  ToolResult,
} from '../../definitions/types.js';
import { loadHistory } from '../run/history.js';
import { AgentportError } from '../../errors.js';
import { queueOnThread } from '../run/threadQueue.js';
import { storeMessage } from '../loop/storeMessage.js';
import type { Run, Side } from '../run/types.js';
import type { OfferedTool } from '../tools/toolset.js';
import { deliverToParent } from '../subagents/delivery.js';
import { childRecords, entryOf, findChild, markTerminated, subagentMetaOf, threadView } from '../subagents/registry.js';
import { ThreadFiles } from './files.js';
import { pageOf } from './messagePages.js';

/** Thread meta key of the durable per-thread values (getValue/setValue). */
const VALUES_META = 'values';
/** Thread meta key set when a thread is terminated. */
export const TERMINATED_META = 'terminatedAt';

/** @param signal a tool call's own abort signal (cancellation or its timeout), seen as execution.abortSignal */
export function threadState(run: Run, side: Side, tool?: OfferedTool, signal?: AbortSignal): ThreadState {
  return new RunThreadState(run, side, tool, signal);
}

class RunThreadState implements ThreadState {
  readonly tenvs: Record<string, unknown> = {};
  private readonly toolName: string | undefined;
  private filesApi: ThreadFiles | undefined;

  private readonly executionView: ExecutionState;

  constructor(
    private readonly run: Run,
    private readonly side: Side,
    tool: OfferedTool | undefined,
    signal?: AbortSignal,
  ) {
    this.executionView = signal ? (Object.create(run.execution, { abortSignal: { value: signal } }) as ExecutionState) : run.execution;
    this.toolName = tool?.name;
    if (tool?.kind === 'function' && tool.tool.definition.tenvs) {
      for (const name of Object.keys(tool.tool.definition.tenvs.shape)) {
        const value = run.scope.get(name, tool.name);
        if (value !== undefined) this.tenvs[name] = value;
      }
    }
  }

  // -- identity
  get threadId(): string {
    return this.run.thread.id;
  }
  get agentId(): string {
    return this.run.thread.prompt;
  }
  get prompt(): string {
    return this.side.prompt.name;
  }
  get userId(): string | null {
    return null;
  }
  get arguments(): Readonly<Record<string, unknown>> {
    return this.run.args;
  }
  get createdAt(): number {
    return Date.parse(this.run.thread.createdAt) * 1000;
  }
  get execution(): ExecutionState {
    return this.executionView;
  }
  get context(): Record<string, unknown> {
    return this.run.context;
  }

  // -- messages
  async getMessages(options: GetMessagesOptions = {}): Promise<{ messages: ThreadMessage[]; total: number; hasMore: boolean }> {
    const page = pageOf(await this.allMessages(), options);
    return { ...page, messages: page.messages.map(copy) };
  }

  async getMessage(id: string): Promise<ThreadMessage | undefined> {
    const found = (await this.allMessages()).find((m) => m.id === id);
    return found && copy(found);
  }

  injectMessage(message: NewThreadMessage): Promise<ThreadMessage> {
    return storeMessage(this.run, this.side, this, message);
  }

  async queueMessage(message: NewThreadMessage): Promise<void> {
    // The running turn takes it; once it is over, the thread's next (or a new) turn does.
    if (this.run.finished) queueOnThread(this.run.services, this.threadId, message);
    else this.run.queue.push({ side: this.side.key, kind: 'message', message });
  }

  async updateMessage(id: string, updates: MessageUpdate): Promise<ThreadMessage> {
    const { hooks } = this.side;
    const patch = await hooks.transform('before_update_message', this, updates, [id]);
    const updated = await this.run.services.store.updateMessage(this.threadId, id, this.run.redactor.deep(patch));
    const index = this.run.messages.findIndex((m) => m.id === id);
    if (index >= 0) this.run.messages[index] = updated;
    await hooks.notify('after_update_message', this, updated);
    return copy(updated);
  }

  async deleteMessage(id: string): Promise<void> {
    const message = (await this.allMessages()).find((m) => m.id === id);
    if (!message) throw new AgentportError('INVALID_ARGUMENTS', `message "${id}" does not exist in thread ${this.threadId}`);
    const callIds = new Set((message.toolCalls ?? []).map((call) => call.id));
    const ids = new Set([id, ...this.run.messages.filter((m) => m.role === 'tool' && callIds.has(m.toolCallId ?? '')).map((m) => m.id)]);
    await this.run.services.store.deleteMessages(this.threadId, [...ids]);
    this.run.messages = this.run.messages.filter((m) => !ids.has(m.id));
  }

  // -- variables
  async env(name: string): Promise<string | undefined> {
    return this.run.scope.get(name, this.toolName);
  }

  envType(name: string): 'secret' | 'text' | undefined {
    return this.run.scope.typeOf(name, this.toolName);
  }

  async setEnv(name: string, value: string, options: { type?: 'secret' | 'text' } = {}): Promise<void> {
    if (typeof name !== 'string' || name === '')
      throw new AgentportError('INVALID_ARGUMENTS', 'setEnv: the variable name must be a non-empty string');
    if (typeof value !== 'string') throw new AgentportError('INVALID_ARGUMENTS', `setEnv: the value of ${name} must be a string`);
    const { scope, redactor, services } = this.run;
    const declared = scope.declared.find((d) => d.name === name);
    const type = declared?.type ?? options.type ?? 'secret';
    scope.set(name, value, type);
    if (type === 'secret') redactor.add(value);
    await services.store.setVariables(this.threadId, [{ name, value, secret: type === 'secret', scoped: declared?.scoped === true }]);
  }

  // -- durable values
  async getValue<T = unknown>(key: string): Promise<T | undefined> {
    return this.values()[key] as T | undefined;
  }

  async setValue(key: string, value: unknown): Promise<void> {
    const json = value === null || value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as unknown);
    this.run.thread = await this.run.services.patchThreadMeta(this.threadId, (meta) => {
      const values = { ...(meta[VALUES_META] as Record<string, unknown> | undefined) };
      if (json === undefined) delete values[key];
      else values[key] = json;
      return { ...meta, [VALUES_META]: values };
    });
  }

  // -- tools
  invokeTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.run.services.engine.invokeTool(this.run, this.side, name, args);
  }

  async queueTool(name: string, args: Record<string, unknown>): Promise<void> {
    if (this.run.finished) throw new AgentportError('INVALID_ARGUMENTS', `queueTool(${name}): the thread is not running; use invokeTool`);
    if (!this.side.toolset.some((tool) => tool.name === name)) {
      throw new AgentportError('UNKNOWN_TOOL', `queueTool: ${this.side.prompt.name} has no tool named "${name}"`);
    }
    this.run.queue.push({ side: this.side.key, kind: 'tool', name, args });
  }

  // -- definitions
  loadPrompt(name: string): PromptDefinition | undefined {
    return this.run.services.registry.prompts.get(name)?.definition;
  }
  loadAgent(name: string): AgentDefinition | undefined {
    return this.run.services.registry.agents.get(name)?.definition;
  }
  loadModel(name: string): ModelDefinition | undefined {
    return this.run.services.registry.models.get(name)?.definition;
  }
  getPromptNames(): string[] {
    return [...this.run.services.registry.prompts.keys()];
  }
  getAgentNames(): string[] {
    return [...this.run.services.registry.agents.keys()];
  }
  getModelNames(): string[] {
    return [...this.run.services.registry.models.keys()];
  }

  // -- files
  writeFile(
    path: string,
    data: string | Uint8Array,
    mimeType: string,
    options?: { name?: string; description?: string; width?: number; height?: number },
  ): Promise<FileRecord> {
    return this.files().write(path, data, mimeType, options);
  }
  readFile(path: string): Promise<Uint8Array | null> {
    return this.files().read(path);
  }
  statFile(path: string): Promise<FileRecord | null> {
    return this.files().stat(path);
  }
  readdirFile(path: string) {
    return this.files().readdir(path);
  }
  unlinkFile(path: string): Promise<void> {
    return this.files().unlink(path);
  }
  mkdirFile(path: string): Promise<void> {
    return this.files().mkdir(path);
  }
  rmdirFile(path: string, options?: { recursive?: boolean }): Promise<void> {
    return this.files().rmdir(path, options);
  }
  findFiles(pattern: string): Promise<FileRecord[]> {
    return this.files().find(pattern);
  }
  grepFiles(pattern: string | RegExp, options?: { path?: string }) {
    return this.files().grep(pattern, options);
  }

  // -- subagents
  get children(): SubagentRegistryEntry[] {
    return childRecords(this.run.thread.meta).map((record) => entryOf(this.run.services, record));
  }

  async getChildThread(reference: string): Promise<ThreadView | undefined> {
    const record = findChild(this.run.thread.meta, reference);
    return record ? threadView(this.run.services, record.reference, record.name) : undefined;
  }

  async getParentThread(): Promise<ThreadView | undefined> {
    const parentId = this.run.thread.parentId;
    return parentId ? threadView(this.run.services, parentId) : undefined;
  }

  async notifyParent(content: string, options: { replyExpected?: boolean; attachments?: string[] } = {}): Promise<void> {
    if (typeof content !== 'string') throw new AgentportError('INVALID_ARGUMENTS', 'notifyParent: content must be a string');
    if (!this.run.thread.parentId) throw new AgentportError('INVALID_ARGUMENTS', 'notifyParent: this thread has no parent');
    await deliverToParent(this.run.services, this.run.thread, this.run.redactor.text(content), {
      replyExpected: options.replyExpected === true,
      ...(options.attachments ? { attachments: options.attachments } : {}),
    });
  }

  // -- execution
  async terminate(): Promise<void> {
    const { execution, services, thread } = this.run;
    execution.stop();
    execution.terminated = true;
    this.run.thread = await services.patchThreadMeta(this.threadId, (meta) => ({ ...meta, [TERMINATED_META]: new Date().toISOString() }));
    if (thread.parentId && subagentMetaOf(thread)) await markTerminated(services, thread.parentId, thread.id);
  }

  private files(): ThreadFiles {
    return (this.filesApi ??= new ThreadFiles(this.run.services.store, this.threadId));
  }

  private values(): Record<string, unknown> {
    const values = this.run.thread.meta?.[VALUES_META];
    return typeof values === 'object' && values !== null ? (values as Record<string, unknown>) : {};
  }

  /** The run's cache while it runs; the store once it has finished (other runs may have added). */
  private async allMessages(): Promise<ThreadMessage[]> {
    return this.run.finished ? this.run.services.store.listMessages(this.threadId) : loadHistory(this.run);
  }
}

function copy(message: ThreadMessage): ThreadMessage {
  return structuredClone(message);
}
