import { defineModel } from 'agentport-mcp';

/**
 * The model every example prompt uses. The built-in `openai` provider speaks
 * the OpenAI Chat Completions API: set OPENAI_API_KEY, or point OPENAI_BASE_URL
 * (or `baseURL` here) at a local OpenAI-compatible server such as Ollama.
 */
export default defineModel({
  name: 'main',
  provider: 'openai',
  model: process.env.AGENTPORT_MODEL ?? 'gpt-4.1-mini',
});
