/**
 * A session: turns by sides until something ends it. A prompt called
 * directly, or an ai_human agent, runs one turn of side A. A dual_ai session
 * alternates side A and side B (or follows forceTurn) until a side calls its
 * sessionStop or sessionFail tool, `execution.stop()` or `terminate()` is
 * called, or `maxSessionTurns` is reached. A side that exceeds its maxSteps,
 * or a model that keeps failing, ends the session as an error.
 */
import { AgentportError, hasCode, isAgentportError, isStop } from '../../errors.js';
import { runTurn } from '../loop/runTurn.js';
import { startImmediateSubagents } from '../subagents/immediate.js';
import type { Run, SessionResult } from '../run/types.js';

export async function runSession(run: Run): Promise<SessionResult> {
  const maxTurns = run.dual ? (run.agent?.definition.maxSessionTurns ?? run.services.maxSessionTurns) : 1;
  const last: { a?: string; b?: string } = {};
  let key: 'a' | 'b' = run.firstSide;
  let turns = 0;
  try {
    const starting = startImmediateSubagents(run);
    if (starting) await starting;
    for (;;) {
      const side = run.sides[key] ?? run.sides.a;
      const end = await runTurn(run, side);
      turns += 1;
      last[side.key] = end.response;
      const reasoning = end.reasoning ? { reasoning: end.reasoning } : {};
      if (end.reason === 'session_fail') {
        const message = end.message || `${side.label} ended the session as failed`;
        return {
          text: '',
          turns,
          error: new AgentportError('SESSION_FAILED', message, {
            side: side.key,
            ...(end.attachments ? { attachments: end.attachments } : {}),
          }).info(),
        };
      }
      if (end.reason === 'session_stop')
        return { text: end.message ?? '', turns, ...reasoning, ...(end.attachments ? { attachments: end.attachments } : {}) };
      if (end.reason === 'stopped' || !run.dual) return { text: end.response, turns, ...reasoning };
      if (turns >= maxTurns) return { text: '', turns, error: turnLimit(run, maxTurns, last).info() };
      key = end.next ?? (key === 'a' ? 'b' : 'a');
    }
  } catch (error) {
    // Cancellation and failures of agentport itself propagate; a run that could not finish is a result.
    if (!isAgentportError(error) || isStop(error, run.thread.id) || hasCode(error, 'INTERNAL')) throw run.redactor.error(error);
    const info = (run.redactor.error(error) as AgentportError).info();
    // The turn that failed counts: it ran.
    return { text: '', turns: turns + 1, error: info };
  }
}

function turnLimit(run: Run, maxTurns: number, last: { a?: string; b?: string }): AgentportError {
  const said = (['a', 'b'] as const)
    .filter((key) => last[key] !== undefined)
    .map((key) => `last from ${run.sides[key]?.label ?? key}: ${JSON.stringify(clip(last[key]!))}`);
  return new AgentportError(
    'SESSION_TURN_LIMIT',
    `the session reached maxSessionTurns (${maxTurns}) without a side ending it${said.length ? ` (${said.join('; ')})` : ''}`,
    { maxSessionTurns: maxTurns, last },
  );
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
