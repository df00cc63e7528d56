/**
 * Keeps long model calls alive for hosts that time tool calls out: while a
 * promise is pending, a progress message is sent every `intervalMs`.
 */
export function withHeartbeat<T>(work: Promise<T>, intervalMs: number, beat: (elapsedSeconds: number) => void): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => beat(Math.round((Date.now() - started) / 1000)), intervalMs);
  const stop = () => clearInterval(timer);
  // The caller awaits `work` itself (and sees its failure); this only ends the beats.
  work.then(stop, stop);
  return work;
}
