/**
 * Runs the built CLI the way users do: a child process, with its exit code,
 * stdout and stderr (a fresh data folder and no API key unless given).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tempDir } from './mcpClients.js';
import { CLI } from './paths.js';

const exec = promisify(execFile);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, AGENTPORT_DATA_DIR: tempDir(), AGENTPORT_DIR: undefined, OPENAI_API_KEY: '', ...options.env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
