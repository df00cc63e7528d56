import { definePrompt } from '@standardagents/spec';
import { z } from 'zod';

/**
 * A prompt with a nested input schema. Written against the spec's own import:
 * agentport maps `@standardagents/spec` to its API when loading agents/.
 */
export default definePrompt({
  name: 'triage_ticket',
  title: 'Triage a support ticket',
  toolDescription: 'Classify a support ticket: category, urgency and the team that should handle it.',
  model: 'main',
  exposeAsTool: true,
  prompt:
    'You triage support tickets. Answer with a JSON object: ' +
    '{"category": string, "urgency": "low"|"normal"|"high", "team": string, "reason": string}.',
  requiredSchema: z.object({
    ticket: z
      .object({
        subject: z.string().describe('The ticket subject line'),
        body: z.string().describe('The full text the customer wrote'),
        channel: z.enum(['email', 'chat', 'phone']).describe('Where the ticket came from'),
      })
      .describe('The ticket to triage'),
    customer: z
      .object({
        tier: z.enum(['free', 'pro', 'enterprise']).describe('The customer plan'),
        open_tickets: z.number().int().min(0).default(0).describe('How many other tickets the customer has open'),
      })
      .describe('Who wrote the ticket'),
    tags: z.array(z.string()).optional().describe('Tags already on the ticket'),
  }),
});
