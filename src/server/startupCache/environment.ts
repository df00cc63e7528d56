/**
 * The environment variables a full load's definitions read (`toolDescription: process.env.X`, an `exposeAsTool`
 * behind a flag): their values shaped what the start-up cache holds, so a start under other values must load in
 * full. The cache keeps their names and a digest of their values, never the values (secrets live there).
 *
 * A read counts when the code that made it (the innermost frame with a file) is the definitions' own
 * (definitionsCode.ts): a file under the agents folder outside its `node_modules`, or a helper elsewhere outside any
 * `node_modules`. Not agentport's own code, not Node's (a child process or a worker handed the whole environment), not
 * a package's: packages look at the environment for their own ends (CI detection, colours, debug switches), and
 * counting those would make every start in another terminal a full load. Code that lists the whole environment
 * (`Object.keys(process.env)`, a spread) makes all of it part of the key. Writes go through and count as nothing.
 *
 * The digest is of the values the load started with: a variable a definition sets itself (a default, a `.env`
 * file it loads) is set again the same way by the next full load, and a start compares before anything runs.
 */
import { syncBuiltinESMExports } from 'node:module';
import { sha256Hex } from '../../sha256.js';
import { callerFile, definitionsCode, type Called } from './definitionsCode.js';

/** Stands for the whole environment among the names: the definitions listed it. */
const WHOLE_ENVIRONMENT = '*';

/** What the definitions read of the environment during a load. */
export interface EnvironmentKey {
  /** The variables' names, sorted ({@link WHOLE_ENVIRONMENT} when the definitions listed them); none most often. */
  names: string[];
  /** {@link environmentDigest} of the values the load started with ('' when `names` is empty). */
  digest: string;
}

/**
 * Runs `work` (a full load of `agentsDir`, and whatever else evaluates the definitions, such as building the tool
 * catalogue) with `process.env` watched, and returns its result with what the definitions read.
 */
export async function readingEnvironment<T>(
  agentsDir: string,
  work: () => Promise<T>,
): Promise<{ result: T; environment: EnvironmentKey }> {
  const environment = process.env;
  const before = { ...environment };
  const names = new Set<string>();
  const isDefinitions = definitionsCode(agentsDir);
  // Code that kept the proxy (`const env = process.env`, node:process's `env` export) can use it after the load:
  // from then on it only passes accesses through.
  let watching = true;
  // The proxy's trap is where the stack of an access is cut.
  const counts = (trap: Called): boolean => watching && isDefinitions(callerFile(trap));
  const record = (trap: Called, name: string | symbol) => {
    if (typeof name === 'string' && !names.has(name) && counts(trap)) names.add(name);
  };
  const get = (target: NodeJS.ProcessEnv, name: string | symbol): unknown => {
    record(get, name);
    return Reflect.get(target, name);
  };
  const has = (target: NodeJS.ProcessEnv, name: string | symbol): boolean => {
    record(has, name);
    return Reflect.has(target, name);
  };
  const getOwnPropertyDescriptor = (target: NodeJS.ProcessEnv, name: string | symbol): PropertyDescriptor | undefined => {
    record(getOwnPropertyDescriptor, name);
    return Reflect.getOwnPropertyDescriptor(target, name);
  };
  const ownKeys = (target: NodeJS.ProcessEnv): Array<string | symbol> => {
    if (counts(ownKeys)) names.add(WHOLE_ENVIRONMENT);
    return Reflect.ownKeys(target);
  };
  // Written to the environment itself (not through the proxy, which Node's environment object refuses as a receiver).
  const set = (target: NodeJS.ProcessEnv, name: string | symbol, value: unknown): boolean => Reflect.set(target, name, value);
  const watched = new Proxy(environment, { get, has, getOwnPropertyDescriptor, ownKeys, set });
  process.env = watched;
  // `import { env } from 'node:process'` in a definition meets the proxy too.
  syncBuiltinESMExports();
  try {
    const result = await work();
    const sorted = [...names].sort();
    return { result, environment: { names: sorted, digest: sorted.length ? environmentDigest(sorted, before) : '' } };
  } finally {
    watching = false;
    // Unless the work put another environment in place itself.
    if (process.env === watched) {
      process.env = environment;
      syncBuiltinESMExports();
    }
  }
}

/** A digest of the variables' values in `environment` (absent ones included as absent): equal digests, equal values. */
export function environmentDigest(names: readonly string[], environment: NodeJS.ProcessEnv = process.env): string {
  const values = names.includes(WHOLE_ENVIRONMENT)
    ? Object.entries(environment).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : names.map((name) => [name, environment[name] ?? null]);
  return sha256Hex(JSON.stringify(values));
}
