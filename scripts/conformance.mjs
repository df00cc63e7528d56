#!/usr/bin/env node
/**
 * `npm run conformance`: the official MCP conformance suite
 * (@modelcontextprotocol/conformance) against agentport over Streamable HTTP.
 *
 * Starts a small OpenAI-compatible model server (answering by rule, keyed on
 * each prompt's system text), starts the built agentport (`dist/`) on the
 * fixture folder test/fixtures/agents/conformance (prompts, agents and tools
 * named as the suite's scenarios call them), runs every server scenario of
 * the suite in each protocol version it applies to (2025-11-25 and
 * 2026-07-28; extension scenarios once), and prints a table: passed, failed,
 * or not applicable with the reason. Exits 1 when a scenario fails.
 *
 * The suite is written for Node 22; on Node 20 it runs through the module
 * hook in test/support/conformance (it only lacks `fs.globSync`).
 *
 * Options: --scenario <name> (repeatable) runs only those; --verbose prints
 * the suite's output of failed scenarios.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'dist/cli/main.js');
const AGENTS = path.join(ROOT, 'test/fixtures/agents/conformance');
const SUITE = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const NODE20_SHIM = path.join(ROOT, 'test/support/conformance/register.mjs');
/** The protocol versions agentport serves (both eras of the SDK v2). */
const VERSIONS = ['2025-11-25', '2026-07-28'];
const SCENARIO_TIMEOUT_MS = 120_000;

/**
 * Scenarios that do not apply to agentport, by name (every version) or
 * `name@version`, with the reason. Each is listed in the table, not run.
 */
const NOT_APPLICABLE = {
  'tools-call-embedded-resource':
    "needs a tool that embeds a resource's contents; agentport results link the files a run produced (resource_link) and inline images and audio, never embedded resources",
  'tools-call-mixed-content':
    'needs text, image and embedded-resource content in one result; agentport results never embed resources (see tools-call-embedded-resource)',
  'tools-call-sampling': "agentport never asks the client's model (sampling): runs call the models of the agents folder",
  'tools-call-elicitation':
    'needs a tool that elicits a fixed form (username, email); agentport elicits only the variables a run declares, as they are declared',
  'elicitation-sep1034-defaults':
    'needs a tool that elicits a fixed form with defaults of every type; agentport elicits only declared variables (text fields)',
  'elicitation-sep1330-enums':
    'needs a tool that elicits the five enum schema variants; agentport elicits only declared variables (text fields)',
  'json-schema-2020-12':
    'needs a tool whose input schema is hand-written JSON Schema ($anchor, if/then/else); agentport generates schemas from zod or Prompty inputs, which cannot declare those keywords',
  'resources-read-text':
    "reads the fixed resource test://static-text; agentport's resources are its threads and their attachments (agentport://threads/...), covered by test/e2e/resources.test.ts",
  'resources-read-binary':
    "reads the fixed resource test://static-binary; agentport's binary resources are thread attachments, covered by test/e2e/resources.test.ts",
  'resources-templates-read':
    "reads test://template/123/data; agentport's templates are agentport://threads/{thread_id}[/messages|/attachments/{path}], covered by test/e2e/resources.test.ts",
  'resources-subscribe':
    'subscribes to test://watched-resource over stateless 2025-11-25 HTTP, where no stream could carry the updates: agentport does not declare resources.subscribe there (subscriptions work over stdio and through subscriptions/listen in 2026-07-28; test/e2e/resources.test.ts)',
  'resources-unsubscribe': 'as resources-subscribe: no resource subscriptions on stateless 2025-11-25 HTTP',
  'prompts-get-embedded-resource':
    'needs a prompt that embeds a resource given as an argument; agentport prompts render their definitions and never embed resources from arguments',
  'prompts-get-with-image':
    'needs a prompt that returns a fixed image; agentport prompts render their definitions (an image only when the definition has one)',
  'server-sse-polling':
    "needs a test_reconnection tool that closes the SSE stream mid-call and resumable streams; agentport's HTTP transport is stateless (no sessions, no event store)",
  'tasks-mrtr-composition':
    'its fixture answers a call with a multi-round-trip input request before the call becomes a task; agentport runs ask for input only inside a task',
  'http-custom-header-server-validation':
    "needs a tool whose input schema marks a parameter with x-mcp-header; agentport's generated schemas have no such annotation",
  ...Object.fromEntries(
    [
      'basic-elicitation',
      'basic-sampling',
      'basic-list-roots',
      'request-state',
      'multiple-input-requests',
      'multi-round',
      'missing-input-response',
      'non-tool-request',
      'result-type',
      'tampered-state',
      'capability-check',
      'ignore-extra-params',
      'validate-input',
    ].map((name) => [
      `input-required-result-${name}`,
      'calls the test_input_required_result_* fixtures, which answer with hand-built input requests (elicitation, sampling, roots, request state); an agentport run asks the person only for the variables it declares, and over 2026-07-28 only inside an MCP task (see the tasks-mrtr-* scenarios)',
    ]),
  ),
};

/** Checks that do not apply inside a scenario that otherwise runs: `{ scenario: { checkId: [expected error text, reason] } }`. */
const CHECKS_NOT_APPLICABLE = {
  'server-stateless': {
    'sep-2575-server-rejects-undeclared-capability': [
      'test_missing_capability',
      "needs a tool that requires the sampling capability; agentport never asks the client's model (its -32021 for an undeclared capability is checked by tasks-required-task-error)",
    ],
    'sep-2575-missing-capability-http-400': ['test_missing_capability', 'as sep-2575-server-rejects-undeclared-capability'],
  },
  'tasks-mrtr-input': {
    'tasks-mrtr-partial-fulfillment': [
      'Unknown tool: multi_input',
      'a run asks one question at a time, so no fixture has two input requests open at once',
    ],
  },
};

// ---------------------------------------------------------------------------
// The model: an OpenAI-compatible responder, by rule.

const PLAY = [
  ['Answer simply.', () => ({ text: 'This is a simple text response for testing.' })],
  ['Draw an image.', (m) => (m.some((x) => x.role === 'tool') ? { text: 'Here is the image.' } : { tools: [['draw_pixel', {}]] })],
  ['Make a sound.', (m) => (m.some((x) => x.role === 'tool') ? { text: 'Here is the sound.' } : { tools: [['beep', {}]] })],
  ['Work in steps.', (m) => (m.some((x) => x.role === 'tool') ? { text: 'Done in steps.' } : { tools: [['sleep', { seconds: 0.05 }]] })],
  [
    'Log while working.',
    (m) => (m.at(-1)?.role === 'tool' ? { text: 'Welcome back!' } : { tools: [['lookup_customer', { name: 'Ada' }]] }),
  ],
  ['This is a simple prompt for testing.', () => ({ text: 'Simple.' })],
  ['Prompt with arguments.', () => ({ text: 'With arguments.' })],
  ['Ask first.', () => ({ text: 'Thank you.' })],
  [
    'Greet.',
    (m) => {
      const asked = userText(m);
      return { text: `Hello, ${/"name"\s*:\s*"([^"]*)"/.exec(asked)?.[1] ?? /name\W+(\w+)/.exec(asked)?.[1] ?? 'you'}!` };
    },
  ],
  [
    'Compute slowly.',
    (m) =>
      m.at(-1)?.role === 'tool'
        ? { text: 'Computed.' }
        : { tools: [['sleep', { seconds: Number(/seconds\W{0,4}(\d+(?:\.\d+)?)/.exec(userText(m))?.[1] ?? 0) }]] },
  ],
  [
    'Fail.',
    (m) =>
      m.at(-1)?.role === 'tool' ? { tools: [['give_up', { message: 'the job always fails' }]] } : { tools: [['sleep', { seconds: 1 }]] },
  ],
  [
    'Delete on confirmation.',
    (m) =>
      m.at(-1)?.role === 'tool'
        ? { text: `Deleted: ${String(m.at(-1).content)}` }
        : { tools: [['subagent_create', { name: 'deleter1', arguments: { message: 'delete the file' } }]] },
  ],
  ['Deleter.', () => ({ tools: [['done', { message: 'the file is gone' }]] })],
];

function userText(messages) {
  return messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

function answer(body) {
  if (body.model === 'broken-model') return { status: 400, error: 'this model refuses every request' };
  const system = String(body.messages?.[0]?.content ?? '');
  const rule = PLAY.find(([prefix]) => system.startsWith(prefix));
  if (!rule) return { status: 500, error: `no rule for the system prompt ${JSON.stringify(system.slice(0, 40))}` };
  return rule[1](body.messages);
}

async function startModel() {
  let n = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (!req.url?.endsWith('/chat/completions')) return send(404, { error: { message: 'not found' } });
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return send(400, { error: { message: 'the body is not JSON' } });
      }
      const reply = answer(body);
      if (reply.status) return send(reply.status, { error: { message: reply.error, type: 'conformance' } });
      n += 1;
      const toolCalls = (reply.tools ?? []).map(([name, args], i) => ({
        id: `call_${n}_${i}`,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      }));
      send(200, {
        id: `chatcmpl-${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: reply.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
            finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

// ---------------------------------------------------------------------------
// agentport over HTTP.

async function startAgentport(modelUrl, dataDir) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('OPENAI_') && !key.startsWith('AGENTPORT_')) env[key] = value;
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--host', '127.0.0.1', '--port', '0', '--dir', AGENTS], {
    env: { ...env, OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: 'conformance', AGENTPORT_DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agentport did not start:\n${stderr}`)), 30_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const match = /at (http:\/\/\S+\/mcp)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agentport exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * One call before the suite starts: the runtime, the store and the agents'
 * tools load on the first call, and some checks read a response stream for
 * half a second only.
 */
async function warmUp(url) {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'agentport-conformance-warm-up', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
  } finally {
    await client.close().catch(() => {});
  }
}

// ---------------------------------------------------------------------------
// The suite.

function suite(args, { timeoutMs = SCENARIO_TIMEOUT_MS } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', NODE20_SHIM, SUITE, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk.toString()));
    child.stderr.on('data', (chunk) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** The suite's server scenarios, each with the versions it applies to (or `extension`). */
async function serverScenarios() {
  const { output } = await suite(['list'], { timeoutMs: 60_000 });
  const section = output.split(/\n(?=\S)/).find((part) => part.startsWith('Server scenarios')) ?? '';
  return [...section.matchAll(/^\s+- (\S+) \[([^\]]*)\]/gm)].map(([, name, versions]) => ({
    name,
    versions: versions.split(',').map((v) => v.trim()),
  }));
}

async function runScenario(url, name, version) {
  const out = mkdtempSync(path.join(tmpdir(), 'agentport-conformance-'));
  try {
    const { output, signal } = await suite([
      'server',
      '--url',
      url,
      '--scenario',
      name,
      ...(version ? ['--spec-version', version] : []),
      '-o',
      out,
    ]);
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('checks.json'));
    const checks = files.flatMap((file) => JSON.parse(readFileSync(path.join(out, file), 'utf8')));
    if (checks.length === 0) {
      const skipped = /SKIPPED: scenario/.test(output);
      return {
        checks,
        output,
        error: skipped ? undefined : signal ? `killed after ${SCENARIO_TIMEOUT_MS / 1000} s` : 'the suite wrote no checks',
        skipped,
      };
    }
    return { checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The runs of a scenario: one per protocol version agentport serves that the scenario applies to. */
function runsOf({ name, versions }) {
  if (versions.includes('extension')) return [{ name, version: undefined }];
  const served = VERSIONS.filter((version) => versions.includes(version));
  if (served.length === 0)
    return [
      {
        name,
        version: versions.join(','),
        notApplicable: `applies to protocol versions ${versions.join(', ')} only; agentport serves ${VERSIONS.join(' and ')}`,
      },
    ];
  return served.map((version) => ({ name, version }));
}

function notApplicable(name, version) {
  return NOT_APPLICABLE[`${name}@${version}`] ?? NOT_APPLICABLE[name];
}

function summarize(run, result) {
  const ignored = CHECKS_NOT_APPLICABLE[run.name] ?? {};
  const counts = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0 };
  const failures = [];
  const excused = [];
  for (const check of result.checks) {
    const excuse = ignored[check.id];
    if (check.status === 'FAILURE' && excuse && String(check.errorMessage ?? '').includes(excuse[0])) {
      excused.push(`${check.id}: ${excuse[1]}`);
      continue;
    }
    if (check.status in counts) counts[check.status] += 1;
    if (check.status === 'FAILURE') failures.push(`${check.id}: ${check.errorMessage ?? 'failed'}`);
  }
  if (result.error) return { status: 'failed', detail: result.error, failures: [result.error] };
  if (result.skipped || (counts.SUCCESS === 0 && counts.FAILURE === 0)) {
    return { status: 'skipped', detail: `the suite ran no check (${counts.SKIPPED} skipped, ${counts.WARNING} warnings)` };
  }
  const parts = [`${counts.SUCCESS} checks passed`];
  if (counts.FAILURE) parts.push(`${counts.FAILURE} failed`);
  if (counts.WARNING) parts.push(`${counts.WARNING} warnings`);
  if (counts.SKIPPED) parts.push(`${counts.SKIPPED} skipped`);
  if (excused.length) parts.push(`not applicable: ${excused.join('; ')}`);
  return { status: failures.length ? 'failed' : 'passed', detail: parts.join(', '), failures };
}

function printTable(rows) {
  const headers = ['scenario', 'version', 'result', 'details'];
  const cells = rows.map((row) => [row.name, row.version ?? 'extension', row.status, row.detail]);
  const widths = headers.slice(0, 3).map((header, i) => Math.max(header.length, ...cells.map((cell) => cell[i].length)));
  const line = (cell) =>
    `${cell
      .slice(0, 3)
      .map((value, i) => value.padEnd(widths[i]))
      .join('  ')}  ${cell[3]}`;
  console.log(line(headers));
  console.log(line(widths.map((w) => '-'.repeat(w)).concat('-------')));
  for (const cell of cells) console.log(line(cell));
}

async function main() {
  const argv = process.argv.slice(2);
  const only = argv.flatMap((arg, i) => (arg === '--scenario' && argv[i + 1] ? [argv[i + 1]] : []));
  const verbose = argv.includes('--verbose');
  const scenarios = (await serverScenarios()).filter((scenario) => only.length === 0 || only.includes(scenario.name));
  if (scenarios.length === 0)
    throw new Error(only.length ? `no server scenario named ${only.join(', ')}` : 'the suite listed no server scenarios');

  const dataDir = mkdtempSync(path.join(tmpdir(), 'agentport-conformance-data-'));
  const model = await startModel();
  const agentport = await startAgentport(model.url, dataDir);
  await warmUp(agentport.url);
  console.log(
    `agentport at ${agentport.url} (agents: ${path.relative(ROOT, AGENTS)}), ${scenarios.length} server scenarios of @modelcontextprotocol/conformance\n`,
  );
  const rows = [];
  try {
    for (const scenario of scenarios) {
      for (const run of runsOf(scenario)) {
        const reason = run.notApplicable ?? notApplicable(run.name, run.version);
        if (reason) {
          rows.push({ ...run, status: 'not applicable', detail: reason });
          console.log(`- ${run.name} (${run.version ?? 'extension'}): not applicable`);
          continue;
        }
        const result = await runScenario(agentport.url, run.name, run.version);
        const summary = summarize(run, result);
        rows.push({ ...run, ...summary });
        console.log(`- ${run.name} (${run.version ?? 'extension'}): ${summary.status}`);
        if (summary.status === 'failed') {
          for (const failure of summary.failures ?? []) console.log(`    ${failure}`);
          if (verbose) console.log(result.output.replace(/^/gm, '    | '));
        }
      }
    }
  } finally {
    await agentport.stop();
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log('');
  printTable(rows);
  const count = (status) => rows.filter((row) => row.status === status).length;
  console.log(
    `\n${count('passed')} passed, ${count('failed')} failed, ${count('not applicable')} not applicable, ${count('skipped')} skipped by the suite`,
  );
  if (count('failed') > 0) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
