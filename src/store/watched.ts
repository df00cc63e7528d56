/**
 * A store that says which thread's messages changed: the same store (every
 * call goes to it, `this` included), with `appendMessage`, `updateMessage`
 * and `deleteMessages` telling listeners the thread's id once the write has
 * succeeded. The MCP server uses it for resource subscriptions
 * (src/server/resources.ts). Only writes made through this object, in this
 * process, are seen: another process on the same data folder or database
 * writes unseen.
 */
import type { Store } from './types.js';

export type ThreadChangeListener = (threadId: string) => void;

export interface WatchedStore {
  store: Store;
  /** Calls `listener` after each message write of a thread; returns the unsubscribe. */
  listen(listener: ThreadChangeListener): () => void;
}

const WRITES = new Set<PropertyKey>(['appendMessage', 'updateMessage', 'deleteMessages']);

export function watchStore(target: Store): WatchedStore {
  const listeners = new Set<ThreadChangeListener>();
  const changed = (threadId: string) => {
    for (const listener of listeners) {
      try {
        listener(threadId);
      } catch {
        // A listener's failure is its own: the write has happened and stands.
      }
    }
  };
  // Methods are bound to the store itself (private fields keep working), once per function
  // (keyed by the function, so a method replaced on the store later, a test's spy say, is seen).
  const methods = new WeakMap<object, unknown>();
  const store = new Proxy(target, {
    get(object, key) {
      const value: unknown = Reflect.get(object, key, object);
      if (typeof value !== 'function') return value;
      let method = methods.get(value);
      if (!method) {
        const bound = (value as (...args: unknown[]) => unknown).bind(object);
        method = WRITES.has(key)
          ? (threadId: string, ...rest: unknown[]) => {
              let written: Promise<unknown>;
              try {
                written = Promise.resolve(bound(threadId, ...rest));
              } catch (error) {
                // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever the store threw, as its own promise would
                return Promise.reject(error);
              }
              return written.then((result) => {
                if (listeners.size) changed(threadId);
                return result;
              });
            }
          : bound;
        methods.set(value, method);
      }
      return method;
    },
  });
  return {
    store,
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
