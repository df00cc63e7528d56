/**
 * Runs one server scenario of the official MCP conformance suite
 * (@modelcontextprotocol/conformance) against a running server, on Node 20
 * through the module-hook shim in test/support/conformance, and returns its
 * checks.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './paths.js';

const SUITE = path.join(REPO_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const NODE20_SHIM = path.join(REPO_ROOT, 'test/support/conformance/register.mjs');

export interface ConformanceCheck {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

function runConformanceScenario(url: string, scenario: string): Promise<{ checks: ConformanceCheck[]; output: string }> {
  const out = mkdtempSync(path.join(tmpdir(), 'agentport-conformance-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', NODE20_SHIM, SUITE, 'server', '--url', url, '--scenario', scenario, '-o', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', () => {
      const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('checks.json'));
      if (files.length === 0) return reject(new Error(`the suite wrote no checks for ${scenario}:\n${output}`));
      resolve({ checks: files.flatMap((file) => JSON.parse(readFileSync(path.join(out, file), 'utf8')) as ConformanceCheck[]), output });
    });
  });
}

/**
 * Runs a file's scenarios all at once when the first is asked for: most of a
 * scenario's time is the suite starting and waiting on the server, so they
 * overlap well. Each test then awaits its own result.
 */
export function conformanceRuns(
  url: () => string,
  scenarios: readonly string[],
): (scenario: string) => Promise<{ checks: ConformanceCheck[]; output: string }> {
  let runs: Map<string, Promise<{ checks: ConformanceCheck[]; output: string }>> | undefined;
  return (scenario) => {
    runs ??= new Map(scenarios.map((name) => [name, runConformanceScenario(url(), name)]));
    // Settled here too, so a scenario whose test never runs leaves no unhandled rejection.
    for (const run of runs.values()) run.catch(() => undefined);
    const run = runs.get(scenario);
    if (!run) throw new Error(`${scenario} is not one of this file's scenarios`);
    return run;
  };
}

/**
 * One test per scenario, named with its clause: the suite reports no check with a refused status (a failure, by
 * default) and at least one success. The scenarios run as {@link conformanceRuns} runs them.
 */
export function itPassesConformance(
  clause: string,
  server: () => { url: string; stderr(): string },
  scenarios: readonly string[],
  refused: ReadonlyArray<ConformanceCheck['status']> = ['FAILURE'],
): void {
  const scenarioRun = conformanceRuns(() => server().url, scenarios);
  for (const scenario of scenarios) {
    it(`[${clause}] passes ${scenario}`, async () => {
      const { checks, output } = await scenarioRun(scenario);
      expect(
        checks.filter((check) => refused.includes(check.status)),
        `${output}\n${server().stderr()}`,
      ).toEqual([]);
      expect(checks.filter((check) => check.status === 'SUCCESS').length).toBeGreaterThan(0);
    }, 60_000);
  }
}
