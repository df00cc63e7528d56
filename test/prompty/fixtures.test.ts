/**
 * Golden-file harness for `.prompty` fixtures.
 *
 * Each `test/fixtures/prompty/<case>.prompty` has a `<case>.expected.json` beside it, and may have
 * `<case>.args.json` (call arguments) and `<case>.env.json` (the env for `${env:}`). The expected
 * file holds a `title` (starting with the clause ids it covers) and either:
 * - `load` (a subset of the loaded file, matched with toMatchObject; `warnings` lists substrings of
 *   every warning in order; `inputJsonSchema` is the inputs as JSON Schema) and/or `render`
 *   (`{messages, tools}`, compared exactly), or
 * - `error`: `{phase: "load"|"render", line, field?, message}` where `message` is a substring and
 *   `others` (optional) lists substrings of further issues.
 * The harness fails on a fixture without an expected file and on any stray file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentportError } from '../../src/errors.js';
import { promptyErrorData } from '../../src/prompty/errors.js';
import { loadPromptyFile } from '../../src/prompty/load.js';
import { renderPrompty } from '../../src/prompty/render.js';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'prompty');
/** Sub-folders holding files that fixtures reference (`${file:}` targets, media) and the e2e agents folder. */
const SUPPORT_DIRS = new Set(['files', 'media', 'e2e']);
const SUFFIXES = ['.prompty', '.expected.json', '.args.json', '.env.json'];

interface Expected {
  title: string;
  load?: Record<string, unknown> & { warnings?: string[]; inputJsonSchema?: unknown };
  render?: { messages: unknown[]; tools: unknown[] };
  error?: { phase: 'load' | 'render'; line?: number; field?: string; message: string; others?: string[] };
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

const entries = readdirSync(DIR);
const cases = entries
  .filter((f) => f.endsWith('.prompty'))
  .map((f) => f.slice(0, -'.prompty'.length))
  .sort();

describe('prompty fixture folder', () => {
  it('has an expected file for every .prompty file and no stray files', () => {
    const problems: string[] = [];
    for (const entry of entries) {
      if (statSync(path.join(DIR, entry)).isDirectory()) {
        if (!SUPPORT_DIRS.has(entry)) problems.push(`unexpected folder ${entry}`);
        continue;
      }
      const suffix = SUFFIXES.find((s) => entry.endsWith(s));
      if (!suffix) {
        problems.push(`stray file ${entry}`);
        continue;
      }
      const base = entry.slice(0, -suffix.length);
      if (!entries.includes(`${base}.prompty`)) problems.push(`${entry} has no ${base}.prompty`);
      if (suffix === '.prompty' && !entries.includes(`${base}.expected.json`)) problems.push(`${entry} has no ${base}.expected.json`);
    }
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThan(10);
  });
});

describe('prompty fixtures', () => {
  for (const name of cases) {
    const expectedFile = path.join(DIR, `${name}.expected.json`);
    let expected: Expected;
    try {
      expected = readJson<Expected>(expectedFile);
    } catch {
      continue; // reported by the folder test above
    }
    it(`${expected.title} (${name})`, async () => {
      const argsFile = path.join(DIR, `${name}.args.json`);
      const envFile = path.join(DIR, `${name}.env.json`);
      const args = entries.includes(`${name}.args.json`) ? readJson<Record<string, unknown>>(argsFile) : {};
      const env = entries.includes(`${name}.env.json`) ? readJson<Record<string, string>>(envFile) : {};
      const file = path.join(DIR, `${name}.prompty`);

      let error: unknown;
      let phase: 'load' | 'render' = 'load';
      try {
        const loaded = await loadPromptyFile(file, { agentsDir: DIR, env });
        if (expected.load) {
          const { warnings, inputJsonSchema, ...subset } = expected.load;
          expect(loaded).toMatchObject(subset);
          if (warnings) {
            expect(loaded.warnings).toHaveLength(warnings.length);
            warnings.forEach((w, i) => expect(loaded.warnings[i]).toContain(w));
          }
          if (inputJsonSchema !== undefined) {
            expect(z.toJSONSchema(loaded.inputSchema, { target: 'draft-2020-12' })).toEqual(inputJsonSchema);
          }
        }
        phase = 'render';
        const rendered = await renderPrompty(loaded, args);
        if (expected.render) expect(rendered).toEqual(expected.render);
        // Nonces stay internal.
        expect(JSON.stringify(rendered)).not.toContain('⟦');
      } catch (err) {
        error = err;
      }
      if (!expected.error) {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrown as caught
        if (error) throw error;
        return;
      }
      expect(error, 'expected an error').toBeInstanceOf(AgentportError);
      expect((error as AgentportError).code).toBe(phase === 'load' ? 'PROMPTY_INVALID' : 'PROMPTY_RENDER');
      const e = { ...promptyErrorData(error)!, message: (error as AgentportError).message };
      expect(phase).toBe(expected.error.phase);
      expect(e.file).toBe(file);
      if (expected.error.line !== undefined) expect(e.line).toBe(expected.error.line);
      if (expected.error.field !== undefined) expect(e.field).toBe(expected.error.field);
      expect(e.message).toContain(expected.error.message);
      expect(e.message).toContain(file);
      for (const other of expected.error.others ?? []) expect(e.message).toContain(other);
      expect(e.issues).toHaveLength(1 + (expected.error.others?.length ?? 0));
    });
  }
});
