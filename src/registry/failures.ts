/**
 * What did not make it into the registry, and why, so that one bad file never
 * distorts another file's message: a reference to a definition that has
 * errors of its own (or that may live in a file that failed to load) says so
 * instead of "unknown", and includes still see a rejected prompt's text, so a
 * circular include is reported as one.
 */
import path from 'node:path';
import type { DefinitionKind } from '../definitions/brand.js';
import type { PromptContent } from '../definitions/types.js';

interface Rejected {
  kind: DefinitionKind;
  name: string;
  file: string;
  value: unknown;
}

export class LoadFailures {
  private readonly rejected = new Map<string, Rejected>();
  private readonly failedFiles: Array<{ file: string; stem: string }> = [];

  /** A definition with a name that failed validation (its own errors are already reported). */
  rejectDefinition(kind: DefinitionKind, name: string, file: string, value: unknown): void {
    const key = `${kind}:${name}`;
    if (!this.rejected.has(key)) this.rejected.set(key, { kind, name, file, value });
  }

  /** The rejected definitions of one kind, for the checks that still apply to them (references). */
  rejectedOf(kind: DefinitionKind): Array<{ name: string; file: string; value: unknown }> {
    return [...this.rejected.values()].filter((rejected) => rejected.kind === kind);
  }

  /** A file that could not be loaded at all (syntax error, invalid frontmatter). */
  failedFile(absoluteFile: string, displayFile: string): void {
    this.failedFiles.push({ file: displayFile, stem: path.basename(absoluteFile).replace(/\.(ts|mts|js|mjs|prompty)$/, '') });
  }

  /** The `prompt` field of a rejected prompt when it has the shape of one, for include resolution. */
  rejectedPromptContent(name: string): PromptContent | undefined {
    const value = this.rejected.get(`prompt:${name}`)?.value as { prompt?: unknown } | undefined;
    const content = value?.prompt;
    if (typeof content === 'string') return content;
    if (!Array.isArray(content)) return undefined;
    const parts = content.every(
      (part: unknown) =>
        typeof part === 'object' &&
        part !== null &&
        (((part as { type?: unknown }).type === 'text' && typeof (part as { content?: unknown }).content === 'string') ||
          ((part as { type?: unknown }).type === 'include' && typeof (part as { prompt?: unknown }).prompt === 'string')),
    );
    return parts ? (content as PromptContent) : undefined;
  }

  /**
   * Why `name`, referenced as one of `kinds`, is not in the registry when a
   * failure explains it: `prompt "x" has errors (in prompts/x.ts, listed
   * there)`; undefined when it is simply unknown.
   */
  explain(kinds: readonly DefinitionKind[], name: string): string | undefined {
    for (const kind of kinds) {
      const rejected = this.rejected.get(`${kind}:${name}`);
      if (rejected) return `${kind} "${name}" is not loaded: its definition in ${rejected.file} has errors (reported there)`;
    }
    const failed = this.failedFiles.find((f) => f.stem === name);
    if (failed) return `"${name}" is not loaded: ${failed.file}, which may define it, could not be loaded (reported there)`;
    return undefined;
  }
}
