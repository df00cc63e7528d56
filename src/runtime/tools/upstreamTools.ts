/**
 * Tools of upstream MCP servers in a run. A prompt names them with `mcp:`
 * entries in `tools` (see src/upstream/references.ts); they join a side's
 * tools when the side first calls its model (connecting to the servers then,
 * not before), and again whenever a server's list changes. They are deferred
 * behind tool_search unless always-loaded, like any deferred tool. A call
 * goes to the server through the process's one client for it; whatever goes
 * wrong (an error result, a protocol error, a crash, a timeout) is an error
 * result the model reads, and cancelling the run cancels the upstream call.
 */
import type { ToolResult, ToolReference } from '../../definitions/types.js';
import { errorMessage, isStop, throwIfAborted } from '../../errors.js';
import type { AttachmentRef } from '../../store/types.js';
import { convertUpstreamContent } from '../../upstream/content.js';
import type { UpstreamTool } from '../../upstream/hub.js';
import { selectUpstreamTool, upstreamReferencesOf, type UpstreamReference } from '../../upstream/references.js';
import type { Run, Side } from '../run/types.js';
import { argumentsOrEmpty, parseArguments } from './arguments.js';
import { DeferredTools, loadedToolsOf } from './deferredTools.js';
import { storeAttachments, type ExecutedTool } from './functionTool.js';
import type { OfferedTool, OfferedUpstreamTool } from './toolset.js';

const referencesByTools = new WeakMap<readonly ToolReference[], UpstreamReference[]>();
/** The toolset without upstream tools, for each merged one. */
const baseOf = new WeakMap<readonly OfferedTool[], readonly OfferedTool[]>();
/** Merged toolsets by base and by what the servers' lists were: shared by runs, so is the search index over them. */
const merged = new WeakMap<readonly OfferedTool[], Map<string, OfferedTool[]>>();
/** What each side's toolset was last merged from. */
const sideKeys = new WeakMap<Side, string>();
/** `mcp:<server>/<tool>` names of tools a server does not have: said once. */
const reportedMissing = new Set<string>();

function referencesOf(tools: readonly ToolReference[] | undefined): UpstreamReference[] {
  if (!tools) return [];
  let references = referencesByTools.get(tools);
  if (!references) referencesByTools.set(tools, (references = upstreamReferencesOf(tools)));
  return references;
}

/**
 * Adds the side's upstream tools to its toolset, connecting to servers not
 * listed yet. A server that cannot be reached is left out for this step (and
 * tried again at the next, after its backoff); tool_search says so.
 */
export async function joinUpstreamTools(run: Run, side: Side): Promise<void> {
  const hub = run.services.upstream;
  if (!hub) return;
  const references = referencesOf(side.prompt.definition.tools);
  if (references.length === 0) return;
  const servers = [...new Set(references.map((reference) => reference.server))].filter((server) => hub.has(server));
  const unlisted = servers.filter((server) => hub.cachedTools(server) === undefined);
  if (unlisted.length) run.progress(`${side.label}: connecting to upstream server${unlisted.length > 1 ? 's' : ''} ${unlisted.join(', ')}`);
  // Listed servers answer from their list at once (or after a list_changed refresh in flight).
  const { failures } = await hub.settle(servers, run.signal, { wait: false });
  throwIfAborted(run.signal);
  for (const failure of failures) if (unlisted.includes(failure.server)) run.services.log(failure.error);
  const key = servers.map((server) => `${server}:${hub.generation(server)}`).join(',') + failures.map((f) => `!${f.server}`).join('');
  if (sideKeys.get(side) === key) return;
  const base = baseOf.get(side.toolset) ?? side.toolset;
  let byKey = merged.get(base);
  if (!byKey) merged.set(base, (byKey = new Map<string, OfferedTool[]>()));
  let toolset = byKey.get(key);
  if (!toolset) {
    toolset = [
      ...base,
      ...upstreamOffered(
        run,
        side,
        references,
        servers.flatMap((server) => hub.cachedTools(server) ?? []),
        base,
      ),
    ];
    baseOf.set(toolset, base);
    byKey.set(key, toolset);
  }
  const note = failures.length
    ? ` Not reachable now (their tools are missing): upstream server${failures.length > 1 ? 's' : ''} ${failures.map((f) => f.server).join(', ')}.`
    : '';
  side.toolset = toolset;
  side.deferred = new DeferredTools(
    toolset,
    run.services.toolSearchThreshold,
    [...loadedToolsOf(run.thread.meta), ...side.deferred.loaded],
    note,
  );
  sideKeys.set(side, key);
}

function upstreamOffered(
  run: Run,
  side: Side,
  references: readonly UpstreamReference[],
  tools: readonly UpstreamTool[],
  base: readonly OfferedTool[],
): OfferedUpstreamTool[] {
  const taken = new Set(base.map((tool) => tool.name));
  const offered: OfferedUpstreamTool[] = [];
  for (const tool of tools) {
    const selected = selectUpstreamTool(references, tool.server, tool.tool, tool.name);
    if (!selected || taken.has(tool.name)) continue;
    taken.add(tool.name);
    const { $schema: _schema, ...parameters } = tool.inputSchema;
    offered.push({
      kind: 'upstream',
      name: tool.name,
      description: tool.description || `${tool.tool} (a tool of the upstream server ${tool.server})`,
      parameters: { type: 'object', ...parameters },
      env: {},
      options: {},
      // Upstream tools wait behind tool_search unless the prompt or the server says otherwise (TS-5).
      defer: true,
      alwaysLoad: selected.alwaysLoad || tool.alwaysLoad,
      upstream: tool,
      timeoutMs: selected.timeoutMs,
    });
  }
  // Named tools the server does not have: a warning, once.
  for (const reference of references) {
    for (const name of reference.only ?? []) {
      const listed = tools.some((tool) => tool.server === reference.server && (tool.tool === name || tool.name === name));
      const id = `${side.prompt.name}:mcp:${reference.server}/${name}`;
      if (!listed && run.services.upstream?.cachedTools(reference.server) && !reportedMissing.has(id)) {
        reportedMissing.add(id);
        run.services.log(`prompt "${side.prompt.name}": upstream server ${reference.server} has no tool "${name}"`);
      }
    }
  }
  return offered;
}

/** Calls an upstream tool for the model. */
export async function runUpstreamTool(run: Run, side: Side, tool: OfferedUpstreamTool, argumentText: string): Promise<ExecutedTool> {
  const none: AttachmentRef[] = [];
  let args: Record<string, unknown>;
  try {
    args = parseArguments(argumentText);
  } catch (error) {
    return {
      result: {
        status: 'error',
        error: `Invalid arguments for ${tool.name}: ${errorMessage(error)}. Call it again with valid JSON arguments.`,
      },
      args: argumentsOrEmpty(argumentText),
      attachments: none,
    };
  }
  const hub = run.services.upstream;
  if (!hub) return { result: { status: 'error', error: `${tool.name}: no upstream servers are configured` }, args, attachments: none };
  try {
    const answer = await hub.call(tool.upstream, args, {
      signal: run.signal,
      ...(tool.timeoutMs !== undefined ? { timeoutMs: tool.timeoutMs } : {}),
      onProgress: (message) => run.progress(`${side.label}: ${tool.name}: ${message}`),
    });
    const content = convertUpstreamContent(answer, tool.name);
    let result: ToolResult = content.isError ? { status: 'error', error: content.text } : { status: 'success', result: content.text };
    let attachments = none;
    if (content.attachments.length) {
      const stored = await storeAttachments(run.services.store, run.thread.id, content.attachments);
      attachments = stored.refs;
      if (stored.errors.length)
        result = { ...result, status: 'error', error: [result.error ?? result.result, ...stored.errors].filter(Boolean).join('; ') };
    }
    return { result, args, attachments };
  } catch (error) {
    if (isStop(error, run.thread.id)) throw error;
    return { result: { status: 'error', error: errorMessage(error) }, args, attachments: none };
  }
}
