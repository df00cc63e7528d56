import { definePrompt } from 'agentport-mcp';

/** The simplest exposed prompt: a string system prompt; callers send `message`. */
export default definePrompt({
  name: 'summarize',
  toolDescription: 'Summarize a piece of text in three bullet points.',
  model: 'main',
  exposeAsTool: true,
  prompt: 'Summarize the user message in at most three short bullet points. Keep names and numbers exact.',
});
