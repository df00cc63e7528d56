/**
 * A thread the store cannot read (damaged files, a database out of reach) is
 * reported with the store's own error, never as a thread that does not
 * exist: a client told "not found" may give up on a thread that is still there.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { threadUri } from '../../src/server/resourceUris.js';
import { FileStore } from '../../src/store/fileStore.js';
import { startInProcess, textOf, type InProcessAgentport } from '../support/inProcess.js';
import { RUNTIME_AGENTS } from './harness.js';

const DAMAGED = 'damaged-thread';
const REFUSED = 'refused-thread';
let dir: string;
let agentport: InProcessAgentport;
let client: Client;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentport-unreadable-'));
  // A thread whose record is not JSON any more (a disk error, a hand edit).
  await mkdir(path.join(dir, 'threads', DAMAGED), { recursive: true });
  await writeFile(path.join(dir, 'threads', DAMAGED, 'thread.json'), '{nope');
  // One the file system refuses to read (a link to itself stands in for EACCES or EIO, which root never meets).
  await mkdir(path.join(dir, 'threads', REFUSED), { recursive: true });
  await symlink('thread.json', path.join(dir, 'threads', REFUSED, 'thread.json'));
  agentport = await startInProcess({
    agentsDir: RUNTIME_AGENTS,
    env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' },
    runtime: { store: new FileStore({ dir }) },
  });
  client = await agentport.connect();
});

afterAll(async () => {
  await agentport?.close();
  await rm(dir, { recursive: true, force: true });
});

const errorOf = (result: { structuredContent?: unknown }) =>
  (result.structuredContent as { error: { code: string; message: string } }).error;

describe('a thread the store cannot read', () => {
  it('continuing it fails with the store error naming the file, not THREAD_NOT_FOUND', async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: DAMAGED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('CORRUPT_DATA');
    expect(textOf(result)).toContain('thread.json');
  });

  it('the store error names the damaged file within the data folder, never by its host path', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: DAMAGED } });
      expect(errorOf(result).message).toContain(`threads/${DAMAGED}/thread.json is not valid JSON`);
      expect(JSON.stringify(result)).not.toContain(dir);
      const refused = await client.readResource({ uri: threadUri(DAMAGED) }).then(
        () => undefined,
        (error: unknown) => String(error),
      );
      expect(refused).toContain(`threads/${DAMAGED}/thread.json`);
      expect(refused).not.toContain(dir);
      // The operator's log has the full path.
      expect(stderr.mock.calls.map((call) => String(call[0])).join('')).toContain(path.join(dir, 'threads', DAMAGED, 'thread.json'));
    } finally {
      stderr.mockRestore();
    }
  });

  it('run_status on it fails with the store error', async () => {
    const result = await client.callTool({ name: 'run_status', arguments: { thread_id: DAMAGED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe('CORRUPT_DATA');
  });

  it('reading its transcript resource fails with the store error, not "resource not found"', async () => {
    await expect(client.readResource({ uri: threadUri(DAMAGED) })).rejects.toThrow(/thread\.json/);
  });

  it("one the file system refuses to read fails naming the thread and the system's code, without host paths", async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: REFUSED } });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: 'INTERNAL', data: { errno: 'ELOOP', threadId: REFUSED } });
    expect(textOf(result)).toContain(`thread ${REFUSED}`);
    expect(textOf(result)).not.toContain(dir);
  });

  it('a thread that is not there is still reported missing', async () => {
    const result = await client.callTool({ name: 'forgetful', arguments: { message: 'next', thread_id: 'never-was' } });
    expect(errorOf(result).code).toBe('THREAD_NOT_FOUND');
  });
});
