import { definePrompt } from 'agentport-mcp';

/** Shared writing rules, included by other prompts (not exposed on its own). */
export default definePrompt({
  name: 'house_style',
  toolDescription: 'Writing rules shared by the support prompts.',
  model: 'main',
  prompt:
    'Write in plain, friendly English. Lead with the answer, then the detail. ' +
    'Never invent order numbers, prices or dates: if you do not know, say so.',
});
