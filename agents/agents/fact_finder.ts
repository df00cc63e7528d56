import { defineAgent } from 'agentport-mcp';

/** A dual_ai agent used as a resumable subagent by `editor_in_chief` (and callable on its own). */
export default defineAgent({
  name: 'fact_finder',
  type: 'dual_ai',
  toolDescription: 'Answer a factual question: a researcher answers, a checker challenges, the agreed answer is returned.',
  exposeAsTool: true,
  sideA: { label: 'researcher', prompt: 'fact_finder_researcher', sessionStop: { name: 'report', messageProperty: 'answer' }, maxSteps: 4 },
  sideB: { label: 'checker', prompt: 'fact_finder_checker', maxSteps: 2 },
  maxSessionTurns: 6,
});
