import { definePrompt } from 'agentport-mcp';

/**
 * A parent prompt with two subagents:
 * - `fact_finder` is resumable: the model starts named instances with
 *   subagent_create and asks them follow-ups with subagent_message (at most 3);
 * - `copy_desk` is non-blocking: calling it returns at once, and the approved
 *   copy arrives later as a message in this thread.
 */
export default definePrompt({
  name: 'editor_in_chief',
  title: 'Editor in chief',
  toolDescription: 'Plan a product page: check facts with fact finders and commission copy from the copy desk.',
  model: 'main',
  exposeAsTool: true,
  includeChat: true,
  prompt:
    'You run a small product page team. Start a fact_finder instance (subagent_create) for each factual question, and ' +
    'send follow-ups to the same instance with subagent_message. Commission copy from copy_desk; it works on its own ' +
    'and its copy arrives later as a message. Summarise what you have so far for the user.',
  tools: [
    { name: 'fact_finder', resumable: { receives_messages: 'side_a', maxInstances: 3 } },
    { name: 'copy_desk', blocking: false },
  ],
});
