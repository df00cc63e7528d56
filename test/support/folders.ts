/** Throwaway folders of definition files for tests. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Writes `{ 'prompts/a.ts': '...' }` under `dir`, making folders as needed; returns `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
