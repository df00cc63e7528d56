#!/usr/bin/env node
/**
 * A round-robin HTTP proxy for trying several agentport instances behind one
 * address (see docs/deployment.md): each request goes to the next upstream in
 * turn, bodies streamed both ways. Loopback only; for trying and testing, not
 * for production (use nginx, HAProxy or your platform's balancer there).
 *
 *   node bench/roundRobin.mjs --port 3333 http://127.0.0.1:3401 http://127.0.0.1:3402
 */
import { createServer, request } from 'node:http';
import { pathToFileURL } from 'node:url';

/** Starts the proxy; resolves with its URL and a close function. */
export async function startRoundRobin(upstreams, port = 0) {
  const targets = upstreams.map((u) => new URL(u));
  let next = 0;
  const server = createServer((req, res) => {
    const target = targets[next++ % targets.length];
    const headers = { ...req.headers, host: target.host };
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `upstream ${target.host}: ${error.message}` }));
    });
    req.pipe(upstream);
    // A caller that goes away (a cancelled stream) closes the upstream request too.
    res.on('close', () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const portAt = args.indexOf('--port');
  const port = portAt >= 0 ? Number(args.splice(portAt, 2)[1]) : 3333;
  if (args.length === 0) {
    console.error('usage: node bench/roundRobin.mjs [--port 3333] <upstream URL>...');
    process.exit(2);
  }
  const proxy = await startRoundRobin(args, port);
  console.error(`round-robin proxy at ${proxy.url}/mcp over ${args.join(', ')}`);
}
