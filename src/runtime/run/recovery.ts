/**
 * After a crash (kill -9, power loss) threads the dead process was running
 * are left `running`. At start the runtime looks for them: a thread marked
 * running that no process holds (its lock is free) is marked `interrupted`,
 * as a shutdown would have done, so run_status, run_wait and tasks/get say so
 * and the next turn tells the model what was interrupted.
 */
import { errorMessage } from '../../errors.js';
import { lockAtOnce } from './lockAtOnce.js';
import type { Services } from './types.js';

export async function recoverInterrupted(services: Services): Promise<string[]> {
  const { store } = services;
  const left = (await store.listThreads()).filter((thread) => thread.status === 'running' && !services.activeRuns.has(thread.id));
  const recovered: string[] = [];
  for (const thread of left) {
    try {
      // A live process running it holds its lock: that one is not ours to mark.
      const release = await lockAtOnce(store, thread.id);
      if (!release) continue;
      try {
        const fresh = await store.getThread(thread.id);
        if (fresh?.status === 'running' && !services.activeRuns.has(thread.id)) {
          await store.updateThread(thread.id, { status: 'interrupted' });
          recovered.push(thread.id);
        }
      } finally {
        await release();
      }
    } catch (error) {
      // Left as it is, with the store's reason: run_status and the next turn report it. The others are still looked at.
      services.log(`thread ${thread.id} was left running and could not be checked: ${errorMessage(error)}`);
    }
  }
  return recovered;
}
