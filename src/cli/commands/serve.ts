import type { Command } from 'commander';
import { DEFAULT_MAX_STEPS } from '../../runtime/limits.js';
import { DEFAULT_TOOL_SEARCH_THRESHOLD } from '../../search/toolSearchTool.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../server/httpDefaults.js';
import { dataDirOf, fail, printIssues, type DirOptions, DIR_HELP, DIR_OPTION } from '../context.js';
import { onStopSignals, type StopSignals } from '../stopSignals.js';

/** How long after start the runtime looks for threads a crashed process left running. */
const RECOVERY_DELAY_MS = 2000;

interface ServeOptions extends DirOptions {
  http?: boolean;
  host?: string;
  port?: string;
  allowedHost?: string[];
  maxSteps?: string;
  maxMessageMb?: string;
  toolTimeout?: string;
  callBudget?: string;
  shutdownGrace?: string;
  runTimeout?: string;
  toolSearch?: string;
  toolSearchThreshold?: string;
  store?: string;
  databaseUrl?: string;
  databaseSchema?: string;
  auth?: string;
  oauthIssuer?: string;
  oauthJwksUrl?: string;
  oauthAudience?: string;
  oauthScopes?: string;
  maxRunsPerUser?: string;
  rateLimit?: string;
  exposeUpstream?: boolean;
  watch?: boolean;
}

/** How long after the server starts answering its start-up cache is written (see saveStartupCacheSoon). */
const SAVE_CACHE_AFTER_MS = 1000;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the agents folder as MCP tools (stdio by default)')
    .option(DIR_OPTION, DIR_HELP)
    .option(
      '--data-dir <path>',
      'where threads and caches are kept (default: $AGENTPORT_DATA_DIR, else .agentport/ beside the agents folder)',
    )
    .option('--store <kind>', 'where threads are kept: file (the data folder), memory, or postgres (env AGENTPORT_STORE)')
    .option('--database-url <url>', 'PostgreSQL connection string for --store postgres (env AGENTPORT_DATABASE_URL)')
    .option('--database-schema <name>', "PostgreSQL schema for agentport's tables, default agentport (env AGENTPORT_DATABASE_SCHEMA)")
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .option('--host <host>', 'HTTP bind address', DEFAULT_HOST)
    .option('--port <port>', 'HTTP port', String(DEFAULT_PORT))
    .option('--allowed-host <name...>', 'extra hostnames accepted in Host/Origin headers')
    .option(
      '--auth <mode>',
      'HTTP authentication: token (AGENTPORT_TOKEN, one user; the default) or oauth (per-user access tokens; env AGENTPORT_AUTH)',
    )
    .option('--oauth-issuer <url>', 'with --auth oauth: the authorization server issuing the tokens (env AGENTPORT_OAUTH_ISSUER)')
    .option(
      '--oauth-jwks-url <url>',
      "with --auth oauth: the issuer's signing keys, when not found through its metadata (env AGENTPORT_OAUTH_JWKS_URL)",
    )
    .option(
      '--oauth-audience <value>',
      "with --auth oauth: the audience tokens must carry, default this server's /mcp URL (env AGENTPORT_OAUTH_AUDIENCE)",
    )
    .option(
      '--oauth-scopes <list>',
      'with --auth oauth: scopes every token must have, space- or comma-separated (env AGENTPORT_OAUTH_SCOPES)',
    )
    .option('--max-runs-per-user <n>', 'runs one user may have going at once, background runs included (default: no limit)')
    .option('--rate-limit <n>', 'calls one user may make per minute (default: no limit)')
    .option('--max-steps <n>', 'model calls allowed in one run', String(DEFAULT_MAX_STEPS))
    .option('--run-timeout <s>', 'seconds a whole call may run before it stops with RUN_TIMEOUT (default: no limit)')
    .option('--shutdown-grace <s>', 'seconds running work gets to record itself when the server stops', '10')
    .option('--call-budget <s>', 'seconds after which a call returns a handle and the run goes on in the background (0: off)', '50')
    .option('--tool-timeout <s>', 'seconds a tool call may run before it is stopped (a tool or tool config timeoutMs wins)', '300')
    .option('--max-message-mb <n>', 'largest message accepted on stdio, in MiB (larger ones are refused with an error)', '64')
    .option('--tool-search <mode>', 'deferred tool search at the MCP surface: auto (over the threshold), on or off', 'auto')
    .option(
      '--expose-upstream',
      'aggregator mode: also serve the tools of the upstream MCP servers of agents/mcp.json, behind tool_search / call_tool',
    )
    .option('--watch', 'reload the agents folder when it changes (a folder with errors is reported and the previous one kept)')
    .option(
      '--tool-search-threshold <n>',
      "exposed tools above which auto turns tool search on; also the number of a prompt's tools above which a run defers them",
      String(DEFAULT_TOOL_SEARCH_THRESHOLD),
    )
    .action(async (options: ServeOptions) => {
      // Before the load: whether tool search is on decides which start-up cache lines a start reads (serveRegistry.ts).
      const mode = options.toolSearch ?? 'auto';
      const threshold = Number(options.toolSearchThreshold);
      if (mode !== 'auto' && mode !== 'on' && mode !== 'off') {
        fail(`--tool-search must be auto, on or off, got "${mode}"`);
        return;
      }
      if (!Number.isInteger(threshold) || threshold < 0) {
        fail(`--tool-search-threshold must be a non-negative integer, got "${options.toolSearchThreshold}"`);
        return;
      }
      const guards = await import('../../server/processGuards.js');
      // Before any user code loads: agents/ files run in this process.
      const heldConsole = guards.redactConsole();
      const protocolOutput = options.http ? undefined : guards.keepStdoutForProtocol();
      guards.survivePromiseLeaks();
      let loaded;
      try {
        const { loadForServe } = await import('../serveRegistry.js');
        // Its start-up cache is written once the server answers (saveStartupCache below), not before.
        loaded = await loadForServe({ ...options, searchSettings: { mode, threshold }, deferCacheWrite: true });
        // However the process ends from here on (a setting refused below, a port in use), short of being killed.
        if (loaded.saveStartupCache) process.once('exit', loaded.saveStartupCache);
        // Secrets the folder declares, with values in the environment, are hidden from what loading printed.
        const { hideDeclaredSecrets } = await import('../../runtime/variables/declaredSecrets.js');
        hideDeclaredSecrets(loaded.registry, process.env);
      } finally {
        heldConsole.release();
      }
      printIssues(loaded.issues);
      if (loaded.errors.length) {
        fail(`not starting: ${loaded.errors.length} error(s) in ${loaded.registry.agentsDir} (listed above)`);
        return;
      }
      // Checked with or without --http: a mistyped value is said, not ignored.
      const port = Number(options.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        fail(`--port must be a port number (0-65535), got "${options.port}"`);
        return;
      }
      const maxSteps = Number(options.maxSteps);
      if (!Number.isInteger(maxSteps) || maxSteps < 1) {
        fail(`--max-steps must be a positive integer, got "${options.maxSteps}"`);
        return;
      }
      const toolTimeout = Number(options.toolTimeout);
      if (!(toolTimeout > 0)) {
        fail(`--tool-timeout must be a positive number of seconds, got "${options.toolTimeout}"`);
        return;
      }
      const callBudget = Number(options.callBudget);
      if (!(callBudget >= 0)) {
        fail(`--call-budget must be a number of seconds (0 turns it off), got "${options.callBudget}"`);
        return;
      }
      const runTimeout = options.runTimeout === undefined ? undefined : Number(options.runTimeout);
      if (runTimeout !== undefined && !(runTimeout > 0)) {
        fail(`--run-timeout must be a positive number of seconds, got "${options.runTimeout}"`);
        return;
      }
      const limits: { maxRunsPerUser?: number; callsPerMinute?: number } = {};
      for (const [flag, value, key] of [
        ['--max-runs-per-user', options.maxRunsPerUser, 'maxRunsPerUser'],
        ['--rate-limit', options.rateLimit, 'callsPerMinute'],
      ] as const) {
        if (value === undefined) continue;
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) {
          fail(`${flag} must be a positive integer, got "${value}"`);
          return;
        }
        limits[key] = n;
      }
      const authMode = options.auth ?? (process.env.AGENTPORT_AUTH || 'token');
      if (authMode !== 'token' && authMode !== 'oauth') {
        fail(`--auth must be token or oauth, got "${authMode}"`);
        return;
      }
      let oauth: import('../../server/auth/settings.js').OAuthSettings | undefined;
      if (authMode === 'oauth') {
        if (!options.http) {
          fail('--auth oauth is for the HTTP transport: add --http (on stdio the host that starts agentport is the one user)');
          return;
        }
        const { oauthSettings } = await import('../../server/auth/settings.js');
        const settings = oauthSettings(options, process.env);
        if (typeof settings === 'string') {
          fail(settings);
          return;
        }
        oauth = settings;
      }
      if (options.exposeUpstream && !loaded.registry.upstream?.servers.size) {
        fail(`--expose-upstream: ${loaded.registry.agentsDir} declares no upstream MCP servers (agents/mcp.json)`);
        return;
      }
      const [{ createAgentportServer }, { log }, exposeUpstream] = await Promise.all([
        import('../../server/createServer.js'),
        import('../../log.js'),
        options.exposeUpstream ? import('../../server/upstreamSurface.js').then((module) => module.exposeUpstream) : undefined,
      ]);
      const dataDir = dataDirOf(options);
      const { chooseStore, openStore } = await import('../../store/open.js');
      let storeChoice;
      try {
        storeChoice = chooseStore(options, dataDir);
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
        return;
      }
      // A database is reached (and migrated) at start, so a wrong URL is said at once; file and memory stores load on the first call.
      let opened: Promise<import('../../store/types.js').Store> | undefined;
      if (storeChoice.kind === 'postgres') {
        try {
          opened = Promise.resolve(await openStore(storeChoice));
        } catch (error) {
          fail(error instanceof Error ? error.message : String(error));
          return;
        }
      }
      let server;
      try {
        server = createAgentportServer(
          loaded.registry,
          async () => {
            const [{ createRuntime }, store] = await Promise.all([import('../../runtime/runtime.js'), opened ?? openStore(storeChoice)]);
            const runtime = createRuntime({
              registry: loaded.registry,
              store,
              maxSteps,
              toolSearchThreshold: threshold,
              toolTimeoutMs: toolTimeout * 1000,
              ...(runTimeout ? { runTimeoutMs: runTimeout * 1000 } : {}),
            });
            if (!limits.maxRunsPerUser && !limits.callsPerMinute) return runtime;
            const { withUserLimits } = await import('../../server/auth/limits.js');
            return withUserLimits(runtime, limits);
          },
          {
            toolSearch: { mode, threshold },
            callBudgetMs: callBudget * 1000,
            ...(exposeUpstream ? { exposeUpstream } : {}),
            ...(options.watch ? { listChanged: true } : {}),
            ...(loaded.tools ? { tools: loaded.tools } : {}),
            ...(loaded.savedSearchIndex ? { savedSearchIndex: loaded.savedSearchIndex } : {}),
          },
        );
      } catch (error) {
        fail(error instanceof Error ? error.message : String(error));
        return;
      }
      if (server.surface.searchOn) log.info(`tool search on: ${server.surface.deferred.length} of ${server.tools.length} tool(s) deferred`);
      if (options.exposeUpstream)
        log.info(
          `exposing the tools of upstream server(s) ${[...loaded.registry.upstream!.servers.keys()].join(', ')} behind tool_search (connected on first use)`,
        );
      // Threads a crashed process left running are marked interrupted, off the start-up path.
      setTimeout(() => {
        void server
          .runtime()
          .then((runtime) => runtime.recoverInterrupted())
          .then((ids) => ids.length && log.info(`${ids.length} thread(s) left running by a stopped process marked interrupted`))
          .catch((error: unknown) =>
            log.warn(`looking for interrupted threads failed: ${error instanceof Error ? error.message : String(error)}`),
          );
      }, RECOVERY_DELAY_MS).unref();
      const startWatching = async () => {
        const { watchAgents } = await import('../watch.js');
        return watchAgents(server, options, {
          loaded: loaded.stamps,
          dependencies: loaded.dependencies,
          ...(options.exposeUpstream ? { exposeUpstream: true } : {}),
        });
      };
      const graceMs = Number(options.shutdownGrace ?? '10') * 1000;
      if (!(graceMs >= 0)) {
        fail(`--shutdown-grace must be a number of seconds, got "${options.shutdownGrace}"`);
        return;
      }
      // SIGTERM, SIGINT, SIGHUP and (stdio) stdin closing: running work is interrupted and recorded, then the process
      // exits (stopSignals.ts: Ctrl-C again quits at once).
      let stopping = false;
      let watching: import('../watch.js').AgentsWatch | undefined;
      /** Closes the HTTP listener, once there is one. */
      let closeListener: (() => Promise<void>) | undefined;
      const stop = (why: string) => {
        if (stopping) return;
        stopping = true;
        // However the stop began, a Ctrl-C from now on quits at once.
        signals?.stopping();
        log.info(`stopping (${why})${why === 'SIGINT' ? ': Ctrl-C again quits at once' : ''}`);
        const deadline = setTimeout(() => process.exit(0), graceMs + 2000);
        deadline.unref();
        // No reload starts while stopping.
        void watching?.close().catch(() => {});
        // Runs are interrupted (and record it) before connections close, which would cancel them instead.
        void server
          .shutdown(graceMs)
          .catch((error: unknown) => log.error(`shutdown: ${error instanceof Error ? error.message : String(error)}`))
          .then(() => closeListener?.())
          .catch(() => {})
          .finally(() => process.exit(0));
        // A server stopped before the cache's turn came (a host that lists the tools and goes) still leaves it: written
        // once the runs have been told to stop, while they record it.
        loaded.saveStartupCache?.();
      };
      /** Listened to from when the server starts its transport: before, a signal ends the process as it would any command. */
      let signals: StopSignals | undefined;
      const watchIfAsked = async () => {
        if (!options.watch) return;
        watching = await startWatching();
        // Stopped while the watch started: no reload starts while stopping.
        if (stopping) void watching.close().catch(() => {});
      };
      if (!options.http) {
        const maxMessageMb = Number(options.maxMessageMb);
        if (!(maxMessageMb > 0)) {
          fail(`--max-message-mb must be a positive number, got "${options.maxMessageMb}"`);
          return;
        }
        const { startStdio } = await import('../../server/stdio.js');
        signals = onStopSignals((signal) => stop(signal));
        startStdio(server, { maxMessageMb, ...(protocolOutput ? { output: protocolOutput } : {}), onEnd: () => stop('stdin closed') });
        await watchIfAsked();
        saveStartupCacheSoon(loaded);
        log.info(
          `serving ${server.tools.length} tool(s) from ${loaded.registry.agentsDir} on stdio${options.watch ? ', reloading it on changes' : ''}`,
        );
        return;
      }
      const { startHttp } = await import('../../server/http.js');
      const token = oauth ? undefined : process.env.AGENTPORT_TOKEN || undefined;
      if (oauth && process.env.AGENTPORT_TOKEN)
        log.warn('AGENTPORT_TOKEN is not used with --auth oauth: every request needs an access token from the issuer');
      signals = onStopSignals((signal) => stop(signal));
      try {
        const running = await startHttp(server, {
          host: options.host ?? DEFAULT_HOST,
          port,
          ...(token ? { token } : {}),
          ...(oauth ? { oauth } : {}),
          ...(options.allowedHost ? { allowedHosts: options.allowedHost } : {}),
        });
        closeListener = () => running.close();
        // Stopped while it started listening: nothing to announce.
        if (stopping) return;
        await watchIfAsked();
        saveStartupCacheSoon(loaded);
        log.info(
          `serving ${server.tools.length} tool(s) from ${loaded.registry.agentsDir} at ${running.url}${oauth ? ` (OAuth: tokens from ${oauth.issuer})` : ''}${options.watch ? ', reloading it on changes' : ''}`,
        );
      } catch (error) {
        // Refused (a port in use, say): the exit code says so, whatever signal comes next.
        signals.close();
        fail(error instanceof Error ? error.message : String(error));
      }
    });
}

/**
 * After a full load, the start-up cache is written a moment after the server starts answering: a host's first
 * requests (initialize, tools/list) come at once, and writing the cache of a big folder takes the main thread for a
 * while (about 150 ms at 10,000 tools on the benchmark machine).
 */
function saveStartupCacheSoon(loaded: { saveStartupCache?: () => void }): void {
  const { saveStartupCache } = loaded;
  if (saveStartupCache) setTimeout(saveStartupCache, SAVE_CACHE_AFTER_MS).unref();
}
