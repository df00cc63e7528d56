/**
 * Structured prompt resolution (spec §2.4): include parts are replaced by the
 * included prompt's own `prompt` field, recursively, and cycles are rejected
 * with the chain that forms them.
 */
import type { PromptContent } from '../definitions/types.js';

export type IncludeResolution =
  | { ok: true; text: string }
  | { ok: false; reason: 'cycle'; chain: string[] }
  | { ok: false; reason: 'unknown'; chain: string[]; missing: string };

export function resolveIncludes(name: string, lookup: (name: string) => PromptContent | undefined): IncludeResolution {
  const memo = new Map<string, string>();

  const visit = (current: string, chain: string[]): IncludeResolution => {
    const cached = memo.get(current);
    if (cached !== undefined) return { ok: true, text: cached };
    const content = lookup(current);
    if (content === undefined) return { ok: false, reason: 'unknown', chain, missing: current };
    if (typeof content === 'string') {
      memo.set(current, content);
      return { ok: true, text: content };
    }
    let text = '';
    for (const part of content) {
      if (part.type === 'text') {
        text += part.content;
        continue;
      }
      if (chain.includes(part.prompt)) {
        return { ok: false, reason: 'cycle', chain: [...chain.slice(chain.indexOf(part.prompt)), part.prompt] };
      }
      const inner = visit(part.prompt, [...chain, part.prompt]);
      if (!inner.ok) return inner;
      text += inner.text;
    }
    memo.set(current, text);
    return { ok: true, text };
  };

  return visit(name, [name]);
}
