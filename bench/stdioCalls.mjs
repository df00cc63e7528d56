// One-step calls over stdio to several servers in turn, through the real MCP client: the loop shared by
// callOverStdio.mjs (agentport against a bare server) and compareStdio.mjs (two builds against a bare server).
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * Starts each server (`servers`: name -> node arguments), then calls the prompt `plain` on each in turn, the
 * order rotating every round, so noise on a shared machine falls on all alike. Each call is answered by the
 * scripted `model`. Returns the milliseconds of each call after `warmup` rounds, by server name, and each
 * server's CPU per call in microseconds (its main thread's time on a core over the measured rounds, from
 * /proc/<pid>/schedstat; undefined where there is none): steadier than times on a shared machine.
 */
export async function callsInTurn(servers, { env, model, runs, warmup }) {
  const clients = {};
  const pids = {};
  for (const [name, args] of Object.entries(servers)) {
    clients[name] = new Client({ name: 'bench', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: 'ignore' });
    await clients[name].connect(transport);
    pids[name] = transport.pid;
  }
  const cpuAtWarm = {};
  const names = Object.keys(clients);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < warmup + runs; round++) {
    if (round === warmup) for (const name of names) cpuAtWarm[name] = onCpuNs(pids[name]);
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      model.reply({ text: 'ok' });
      const started = performance.now();
      const result = await clients[name].callTool({ name: 'plain', arguments: { message: 'hi' } });
      if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
      if (round >= warmup) samples[name].push(performance.now() - started);
    }
  }
  const cpu = Object.fromEntries(
    names.map((name) => {
      const now = onCpuNs(pids[name]);
      return [name, now === undefined || cpuAtWarm[name] === undefined ? undefined : (now - cpuAtWarm[name]) / runs / 1000];
    }),
  );
  await Promise.all(Object.values(clients).map((client) => client.close()));
  return { samples, cpu };
}

/** A table cell for a server's CPU per call (us) and its ratio to the bare server's; n/a where either is unknown. */
export function cpuCell(own, bare) {
  return own === undefined || bare === undefined ? 'n/a' : `${Math.round(own)} (${(own / bare).toFixed(2)})`;
}

/** Nanoseconds a process's main thread has run on a core (Linux); undefined elsewhere. */
function onCpuNs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}
