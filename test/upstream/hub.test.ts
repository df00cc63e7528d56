/** The upstream hub against real processes: failures, backoff, reconnection. */
import { afterAll, describe, expect, it } from 'vitest';
import type { LoadIssue } from '../../src/definitions/issues.js';
import { parseUpstreamConfig } from '../../src/upstream/config.js';
import { backoffMs } from '../../src/upstream/connection.js';
import { UpstreamHub } from '../../src/upstream/hub.js';
import { STDIO_UPSTREAM } from '../support/upstream.js';

const issues: LoadIssue[] = [];
const config = parseUpstreamConfig(
  JSON.stringify({
    mcpServers: {
      fx: { command: process.execPath, args: [STDIO_UPSTREAM] },
      broken: { command: process.execPath, args: ['/no/such/upstream-server.mjs'] },
    },
  }),
  { file: 'mcp.json', agentsDir: process.cwd(), env: {}, issues },
)!;
const logs: string[] = [];
const hub = new UpstreamHub(config, { log: (line) => logs.push(line) });
afterAll(() => hub.close());

describe('the upstream hub', () => {
  it('[UP-3] backs off between failed attempts: 0.5 s, 1 s, 2 s ... up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 10].map(backoffMs)).toEqual([0, 500, 1000, 2000, 4000, 30_000]);
  });

  it('[UP-3] reports a server that does not start with what it printed, and waits out the backoff before trying again', async () => {
    await expect(hub.tools('broken')).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringMatching(/^upstream server broken is unavailable: .*Cannot find module/),
    });
    // Right after a failure: the caller that cannot wait is told when the next attempt is.
    await expect(hub.tools('broken', undefined, { wait: false })).rejects.toThrow(/the next attempt is in 0\.\d s/);
    const started = Date.now();
    await expect(hub.tools('broken')).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(hub.status().find((s) => s.name === 'broken')).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('Cannot find module'),
    });
  });

  it('[UP-2] connects lazily, one client per server, and shares the list', async () => {
    expect(hub.status().find((s) => s.name === 'fx')!.state).toBe('not connected');
    const [a, b] = await Promise.all([hub.tools('fx'), hub.tools('fx')]);
    expect(a).toBe(b);
    expect(a.map((tool) => tool.name)).toContain('fx__echo');
    expect(hub.status().find((s) => s.name === 'fx')).toMatchObject({ state: 'ready', tools: 14, protocolVersion: '2025-11-25' });
    expect(logs.filter((line) => line.startsWith('upstream server fx: connected'))).toHaveLength(1);
    const result = await hub.call(hub.lookup('fx__echo')!, { text: 'shared' });
    expect(result.content).toEqual([{ type: 'text', text: 'echo: shared' }]);
  });

  it('[UP-3] an already-aborted call never reaches the server', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(hub.call(hub.lookup('fx__echo')!, { text: 'x' }, { signal: controller.signal })).rejects.toMatchObject({
      code: 'CANCELLED',
    });
  });
});
