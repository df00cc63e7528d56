/**
 * `doctor --types`: `tsc --noEmit -p <tsconfig>` with the folder's own
 * TypeScript (the devDependency `agentport init` writes), its errors as load
 * issues named `file:line:column`. The tsconfig is the folder's own, else the
 * nearest one above it within its package (an agents folder inside a
 * TypeScript project), when that one includes the folder's files; then only
 * errors in the folder are reported.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { LoadIssue } from '../definitions/issues.js';
import { shownPath } from './context.js';

export interface TypeCheckResult {
  issues: LoadIssue[];
  /** One line for the report: what ran and how it went. */
  summary: string;
}

/** tsc's `--pretty false` lines: `file(line,col): error TS2322: message`, continuation lines indented. */
const DIAGNOSTIC = /^(?<file>.+?)\((?<line>\d+),(?<column>\d+)\): (?<severity>error|warning) (?<code>TS\d+): (?<message>.*)$/;
const GLOBAL_DIAGNOSTIC = /^(?<severity>error|warning) (?<code>TS\d+): (?<message>.*)$/;

export async function typeCheck(agentsDir: string): Promise<TypeCheckResult> {
  const tsc = resolveTsc(agentsDir);
  const found = await findTsconfig(agentsDir, tsc);
  if (typeof found === 'string' || found === undefined) {
    return {
      issues: [
        {
          severity: 'error',
          file: shownPath(agentsDir),
          message: `no tsconfig.json: --types type-checks a folder that has one (agentport init writes it)${found ? `; ${found}` : ''}`,
        },
      ],
      summary: 'types: not checked (no tsconfig.json)',
    };
  }
  const { tsconfig } = found;
  if (!tsc) {
    return {
      issues: [
        {
          severity: 'error',
          file: shownPath(tsconfig),
          message: `typescript is not installed: run npm install in ${shownPath(agentsDir)} (its package.json lists typescript)`,
        },
      ],
      summary: 'types: not checked (typescript not installed)',
    };
  }
  const { code, output } = await run(process.execPath, [tsc.bin, '--noEmit', '-p', tsconfig, '--pretty', 'false'], agentsDir);
  // With a tsconfig above the folder, what it reports of other files is not this folder's concern.
  const issues: LoadIssue[] = parseDiagnostics(output, agentsDir, tsconfig)
    .filter((issue) => found.own || issue.inside !== false)
    .map(({ inside: _inside, ...issue }) => issue);
  if (code !== 0 && issues.length === 0) {
    issues.push({
      severity: 'error',
      file: shownPath(tsconfig),
      message: `tsc failed (exit code ${code}): ${output.trim().split('\n')[0] ?? ''}`,
    });
  }
  for (const issue of issues) {
    if (/^TS2307: Cannot find module '(agentport-mcp|zod)'/.test(issue.message))
      issue.message += ` (run npm install in ${shownPath(agentsDir)})`;
  }
  const errors = issues.filter((i) => i.severity === 'error').length;
  return { issues, summary: `types: ${errors ? `${errors} error(s)` : 'ok'} (tsc ${tsc.version} --noEmit -p ${shownPath(tsconfig)})` };
}

/** The tsconfig that type-checks a folder: its own, or the nearest above it within its package that includes its files. */
async function findTsconfig(
  agentsDir: string,
  tsc: { bin: string } | undefined,
): Promise<{ tsconfig: string; own: boolean } | string | undefined> {
  const own = path.join(agentsDir, 'tsconfig.json');
  if (existsSync(own)) return { tsconfig: own, own: true };
  for (let dir = path.dirname(agentsDir); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'tsconfig.json');
    if (existsSync(candidate)) {
      if (!tsc) return { tsconfig: candidate, own: false };
      // Parsed, not checked: the files it compiles.
      const { output } = await run(process.execPath, [tsc.bin, '-p', candidate, '--listFilesOnly'], dir);
      const inside = output.split(/\r?\n/).some((file) => file.trim() !== '' && isInside(agentsDir, path.resolve(dir, file.trim())));
      return inside ? { tsconfig: candidate, own: false } : `${shownPath(candidate)} does not include this folder`;
    }
    // The package's root is as far as a tsconfig is looked for.
    if (existsSync(path.join(dir, 'package.json')) || path.dirname(dir) === dir) return undefined;
  }
}

function isInside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** Diagnostics as load issues; `inside` says whether a located one is in the agents folder. */
function parseDiagnostics(output: string, cwd: string, tsconfig: string): Array<LoadIssue & { inside?: boolean }> {
  const issues: Array<LoadIssue & { inside?: boolean }> = [];
  for (const line of output.split(/\r?\n/)) {
    const located = DIAGNOSTIC.exec(line);
    const global = located ? null : GLOBAL_DIAGNOSTIC.exec(line);
    const match = located ?? global;
    if (match?.groups) {
      const { severity, code, message } = match.groups as { severity: 'error' | 'warning'; code: string; message: string };
      const where = located?.groups ? path.resolve(cwd, located.groups.file!) : undefined;
      const file = where && located?.groups ? `${shownPath(where)}:${located.groups.line}:${located.groups.column}` : shownPath(tsconfig);
      issues.push({ severity, file, message: `${code}: ${message}`, ...(where ? { inside: isInside(cwd, where) } : {}) });
    } else if (/^\s+\S/.test(line) && issues.length) {
      // A message chain continues on indented lines.
      issues[issues.length - 1]!.message += `\n${line}`;
    }
  }
  return issues;
}

/** The folder's own TypeScript, else (in a development checkout) agentport's. */
function resolveTsc(agentsDir: string): { bin: string; version: string } | undefined {
  for (const from of [path.join(agentsDir, 'package.json'), import.meta.url]) {
    try {
      const manifest = createRequire(from).resolve('typescript/package.json');
      const { version } = createRequire(from)('typescript/package.json') as { version: string };
      const bin = path.join(path.dirname(manifest), 'bin', 'tsc');
      if (existsSync(bin)) return { bin, version };
    } catch {
      // Not installed there.
    }
  }
  return undefined;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}
