/**
 * Keeps long model calls alive for hosts that time tool calls out: while a
 * promise is pending, a progress message is sent every `intervalMs`.
 */
export async function withHeartbeat<T>(work: Promise<T>, intervalMs: number, beat: (elapsedSeconds: number) => void): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => beat(Math.round((Date.now() - started) / 1000)), intervalMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
