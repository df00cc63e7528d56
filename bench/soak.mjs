// Soak: the fault battery in a loop for a bounded time, against the built CLI over
// stdio and loopback only, with the scripted model. It reports what it tried and
// what survived, and fails (exit 1) if a thread or message was lost or a secret
// showed up in any output.
//   node bench/soak.mjs            # 1 minute
//   SOAK_MINUTES=10 node bench/soak.mjs
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ROOT, fakeModelServer, removeDir, tempDir } from './support.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 1);
const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');
const AGENTS = path.join(ROOT, 'test', 'fixtures', 'agents', 'noisy');
const { FileStore } = await import(path.join(ROOT, 'dist', 'store', 'fileStore.js'));
const SECRET = 'sk-soak/secret+value=42';

const model = await fakeModelServer();
const dataDir = tempDir('agentport-soak-');
const figures = {
  rounds: 0,
  calls: 0,
  answered: 0,
  faults: 0,
  survived: 0,
  inputs: 0,
  restarts: 0,
  threadsLost: 0,
  messagesLost: 0,
  secretsSeen: 0,
};
/** Thread id -> messages the store must hold at least. */
const expected = new Map();
let output = '';

async function start() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--dir', AGENTS, '--max-message-mb', '1', '--tool-timeout', '2', '--shutdown-grace', '3'],
    env: { ...process.env, OPENAI_BASE_URL: model.baseURL, OPENAI_API_KEY: 'k', AGENTPORT_DATA_DIR: dataDir },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => (output += chunk.toString()));
  const client = new Client({ name: 'soak', version: '1' });
  await client.connect(transport);
  figures.restarts += 1;
  return { client, pid: transport.pid };
}

async function call(client, name, args, meta, options) {
  figures.calls += 1;
  figures.inputs += 1;
  const result = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, options);
  figures.answered += 1;
  output += JSON.stringify(result);
  const thread = result.structuredContent?.thread_id;
  if (thread && !result.isError) expected.set(thread, (expected.get(thread) ?? 0) + 2);
  return result;
}
async function fault(work) {
  figures.faults += 1;
  try {
    await work();
  } catch {
    // A fault may end the call; what matters is that the server goes on.
  }
  try {
    await server.client.listTools();
    figures.survived += 1;
  } catch {
    // Counted as not survived.
  }
}
const gone = (pid) =>
  new Promise((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });

const deadline = Date.now() + MINUTES * 60_000;
let server;
server = await start();
while (Date.now() < deadline) {
  figures.rounds += 1;
  const { client } = server;
  // A tool that prints its secret every way it can.
  model.reply({ toolCalls: [{ name: 'prints_secret', arguments: {} }] }, { text: 'printed' });
  await call(client, 'printer', { message: 'go' }, { 'agentport/variables': { API_TOKEN: SECRET } });
  // Model faults: 500 then 429 then an answer; a body that is not JSON; a choice without a message.
  await fault(async () => {
    model.reply({ status: 500, error: 'boom' }, { status: 429, error: 'slow down' }, { text: 'after retries' });
    await call(client, 'noisy', { message: 'retry me' });
  });
  await fault(async () => {
    model.reply({ raw: '{"trunc' }, { raw: JSON.stringify({ choices: [{ message: null }] }) }, { text: 'recovered' });
    await call(client, 'noisy', { message: 'bad answers' });
  });
  // An oversized message (the server limit is 1 MiB), then a tool that hangs past its timeout.
  await fault(() => call(client, 'noisy', { message: 'x'.repeat(1_200_000) }));
  await fault(async () => {
    model.reply({ toolCalls: [{ name: 'slow_step', arguments: { label: 'hang' } }] }, { text: 'moved on' });
    await call(client, 'worker', { message: 'hang' });
  });
  // A call cancelled while the model is slow.
  await fault(async () => {
    const controller = new AbortController();
    model.reply({ text: 'late', delayMs: 400 });
    const pending = call(client, 'noisy', { message: 'cancel me' }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await pending;
  });
  // Every few rounds: SIGTERM or kill -9 in the middle of a tool, then restart and continue the thread.
  if (figures.rounds % 3 === 0) {
    await fault(async () => {
      model.reply({
        toolCalls: [
          { name: 'quick_step', arguments: { label: 'a' } },
          { name: 'slow_step', arguments: { label: 'b' } },
        ],
      });
      const pending = server.client.callTool({ name: 'worker', arguments: { message: 'interrupt me' } }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 700));
      process.kill(server.pid, figures.rounds % 2 ? 'SIGKILL' : 'SIGTERM');
      await gone(server.pid);
      await pending;
      server = await start();
      const store = new FileStore({ dir: dataDir });
      const threads = await store.listThreads();
      const interrupted = threads.find((t) => t.status === 'interrupted' || t.status === 'running');
      if (interrupted) {
        model.reply({ text: 'picked up' });
        await call(server.client, 'worker', { message: 'go on', thread_id: interrupted.id });
      }
    });
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
}
await server.client.close();
await new Promise((resolve) => setTimeout(resolve, 300));
// What the model was sent is output too.
output += JSON.stringify(model.requests.map((r) => r.body));
await model.stop();

// Every answered thread is still there with its messages; no secret in any output.
const store = new FileStore({ dir: dataDir });
for (const [thread, count] of expected) {
  const record = await store.getThread(thread);
  if (!record) figures.threadsLost += 1;
  else if ((await store.listMessages(thread)).length < count) figures.messagesLost += 1;
}
for (const form of [SECRET, encodeURIComponent(SECRET), JSON.stringify(SECRET).slice(1, -1)])
  figures.secretsSeen += output.split(form).length - 1;
await store.close();
removeDir(dataDir);

const line = (label, value) => `| ${label} | ${value} |`;
console.log(
  [
    `## Soak (${MINUTES} min, \`node bench/soak.mjs\`)`,
    '',
    '| figure | value |',
    '|---|---|',
    line('rounds of the fault battery', figures.rounds),
    line('calls made / answered', `${figures.calls} / ${figures.answered}`),
    line('faults injected / survived (server still serving)', `${figures.faults} / ${figures.survived}`),
    line('inputs tried', figures.inputs),
    line('server processes started (restarts after SIGTERM / kill -9)', figures.restarts),
    line('threads lost (must be 0)', figures.threadsLost),
    line('threads that lost messages (must be 0)', figures.messagesLost),
    line('secrets seen in any output (must be 0)', figures.secretsSeen),
  ].join('\n'),
);
if (figures.threadsLost || figures.messagesLost || figures.secretsSeen) process.exit(1);
process.exit(0);
