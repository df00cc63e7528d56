/**
 * Messages from a subagent instance to its parent: a session's result
 * (implicit communication) or `state.notifyParent`. Files named with it are
 * copied into the parent's /attachments/. Every message says in plain words
 * whether the child expects a reply. The message is queued on the parent
 * thread: a running parent gets it before its next step, an idle one starts
 * a turn with it.
 */
import { errorMessage } from '../../errors.js';
import type { ThreadRecord } from '../../store/types.js';
import { queueOnThread } from '../run/threadQueue.js';
import type { Services, SessionResult } from '../run/types.js';
import { copyFilesAcross } from '../state/files.js';
import { subagentMetaOf } from './registry.js';

export async function deliverToParent(
  services: Services,
  child: ThreadRecord,
  body: string,
  options: { replyExpected: boolean; attachments?: readonly string[] },
): Promise<void> {
  const meta = subagentMetaOf(child);
  if (!child.parentId || !meta) return;
  let files = '';
  if (options.attachments?.length) {
    try {
      const copied = await copyFilesAcross(services.store, child.id, child.parentId, options.attachments);
      files = `\nFiles: ${copied.map((ref) => ref.path).join(', ')}`;
    } catch (error) {
      files = `\n(Its files could not be handed over: ${errorMessage(error)})`;
    }
  }
  const reply = options.replyExpected
    ? `It expects a reply: answer with subagent_message to "${meta.name}".`
    : meta.resumable
      ? `No reply is expected. You can give it more work with subagent_message to "${meta.name}".`
      : 'No reply is expected.';
  queueOnThread(
    services,
    child.parentId,
    {
      role: 'user',
      content: `Message from subagent "${meta.name}" (${meta.agent}, reference ${child.id}):\n${body}${files}\n\n${reply}`,
      meta: { from: child.id, subagent: meta.name },
    },
    meta.parentSide ?? 'a',
  );
}

/** The parent's message about a session that ended on its own (non-blocking). */
export function sessionReport(result: SessionResult): string {
  return result.error ? `It ended without a result (${result.error.code}): ${result.error.message}` : result.text;
}
