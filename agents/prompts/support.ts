import { definePrompt } from 'agentport-mcp';

/** A structured prompt: its system text is assembled from parts and includes. */
export default definePrompt({
  name: 'support',
  title: 'Customer support',
  toolDescription: 'Answer a customer support question about orders, shipping or returns.',
  model: 'main',
  exposeAsTool: true,
  prompt: [
    { type: 'text', content: 'You are the support assistant of an online shop.\n\n' },
    { type: 'include', prompt: 'house_style' },
    { type: 'text', content: '\n\nUse lookup_order for anything about a specific order.' },
  ],
  tools: ['lookup_order', 'current_time'],
  includeChat: true,
});
