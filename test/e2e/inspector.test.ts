/**
 * The MCP Inspector's CLI mode, driven by the repository's own mcp.json, as
 * the README tells users to run it.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../support/fakeModelServer.js';
import { tempDir } from '../support/mcpClients.js';
import { REPO_ROOT, EXAMPLE_TOOLS, RUN_TOOLS } from '../support/paths.js';

const exec = promisify(execFile);
const INSPECTOR = path.join(REPO_ROOT, 'node_modules', '.bin', 'mcp-inspector');
const model = new FakeModelServer();

beforeAll(() => model.start());
afterAll(() => model.stop());

function inspector(args: string[]) {
  return exec(INSPECTOR, ['--cli', '--config', 'mcp.json', '--server', 'agentport', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, AGENTPORT_DATA_DIR: tempDir(), OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'inspector-key' },
  });
}

describe('the MCP Inspector CLI with mcp.json', () => {
  it('lists the example tools', async () => {
    const { stdout } = await inspector(['--method', 'tools/list']);
    const { tools } = JSON.parse(stdout) as { tools: Array<{ name: string }> };
    expect(tools.map((t) => t.name)).toEqual([...EXAMPLE_TOOLS, ...RUN_TOOLS]);
  });

  it('calls a prompt and shows the model answer', async () => {
    model.reply({ text: '- one\n- two' });
    const { stdout } = await inspector(['--method', 'tools/call', '--tool-name', 'summarize', '--tool-arg', 'message=Long text here']);
    expect(JSON.parse(stdout)).toMatchObject({ content: [{ type: 'text', text: '- one\n- two' }] });
    expect(model.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Long text here' });
  });
});
