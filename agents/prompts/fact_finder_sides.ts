import { definePrompt } from 'agentport-mcp';
import { z } from 'zod';

/** Side A of `fact_finder`: answers a question and reports when the checker agrees. */
export const factFinder = definePrompt({
  name: 'fact_finder_researcher',
  toolDescription: 'Answers a factual question.',
  model: 'main',
  requiredSchema: z.object({ question: z.string().describe('The question to answer') }),
  prompt:
    'Answer the question in the request in two or three sentences, saying how sure you are. A checker replies to each ' +
    'answer. When the checker agrees, call report with the final answer as `answer`. Later messages may ask follow-up questions.',
  tools: ['current_time'],
  includeChat: true,
});

/** Side B of `fact_finder`. */
export const factChecker = definePrompt({
  name: 'fact_finder_checker',
  toolDescription: 'Checks a factual answer.',
  model: 'main',
  prompt: 'You check answers for claims that are unsupported or overstated. Reply with the problems, or with AGREED if there are none.',
});
