import { defineAgent } from 'agentport-mcp';

/**
 * A dual_ai agent: the copywriter (side A) and the editor (side B) take turns.
 * The copywriter sees the caller's request and the editor's notes as user
 * messages; the editor sees each draft as a user message. The session ends
 * when the copywriter calls `publish` (its `copy` argument is the result) or
 * `give_up`, or after 6 turns.
 */
export default defineAgent({
  name: 'copy_desk',
  type: 'dual_ai',
  title: 'Copy desk',
  toolDescription: 'Write product copy: a copywriter drafts, an editor reviews, and the approved copy is returned.',
  exposeAsTool: true,
  sideA: {
    label: 'copywriter',
    prompt: 'copywriter',
    sessionStop: { name: 'publish', messageProperty: 'copy' },
    sessionFail: { name: 'give_up', messageProperty: 'reason' },
    maxSteps: 4,
  },
  sideB: {
    label: 'editor',
    prompt: 'copy_editor',
    sessionStatus: 'report_progress',
    maxSteps: 4,
  },
  maxSessionTurns: 6,
});
