import { definePrompt } from 'agentport-mcp';
import { z } from 'zod';

/** Side A of the `copy_desk` agent: writes, revises, and decides when the copy is done. */
export default definePrompt({
  name: 'copywriter',
  toolDescription: 'Writes product copy.',
  model: 'main',
  requiredSchema: z.object({
    product: z.string().describe('What the copy is about'),
    audience: z.string().describe('Who reads it').default('online shoppers'),
  }),
  prompt:
    'You write short product copy (at most 60 words) for the product and audience in the request. ' +
    'An editor answers each draft with notes. Revise until the editor approves, then call publish ' +
    'with the final copy as `copy`. If the request cannot be written honestly, call give_up with the reason.',
});
