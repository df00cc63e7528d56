/**
 * The environment variables a full load's definitions read (`toolDescription: process.env.X`, an `exposeAsTool`
 * behind a flag): their values shaped what the start-up cache holds, so a start under other values must load in
 * full. The cache keeps their names and a digest of their values, never the values (secrets live there).
 *
 * A read counts when the code that made it is neither agentport's own nor a package's (a file under a
 * `node_modules` folder): packages look at the environment for their own ends (CI detection, colours, debug
 * switches), and counting those would make every start in another terminal a full load. Code that lists the
 * whole environment (`Object.keys(process.env)`, a spread) makes all of it part of the key.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installationRoot } from '../../installation.js';
import { sha256Hex } from '../../sha256.js';

/** Stands for the whole environment among the names: the definitions listed it. */
const WHOLE_ENVIRONMENT = '*';

/** A trap of the proxy over `process.env`: where the stack of an access is cut. */
type Trap = (...args: never[]) => unknown;

/** Frames looked at to find who read a variable: the reader is the first one outside Node. */
const STACK_FRAMES = 10;

/**
 * Runs `work` (a full load) with `process.env` watched, and returns its result with the names of the variables the
 * definitions read (sorted; {@link WHOLE_ENVIRONMENT} when they listed them).
 */
export async function readingEnvironment<T>(work: () => Promise<T>): Promise<{ result: T; names: string[] }> {
  const environment = process.env;
  const names = new Set<string>();
  const own = ownFolders();
  /** Whether the code that made the access `trap` answers is a definition's (see above). */
  const counts = (trap: Trap): boolean => {
    const file = readerFile(trap);
    return file !== undefined && !file.includes(`${path.sep}node_modules${path.sep}`) && !own.some((folder) => file.startsWith(folder));
  };
  const record = (trap: Trap, name: string | symbol) => {
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
  const handler: ProxyHandler<NodeJS.ProcessEnv> = { get, has, getOwnPropertyDescriptor, ownKeys };
  const watched = new Proxy(environment, handler);
  process.env = watched;
  try {
    const result = await work();
    return { result, names: [...names].sort() };
  } finally {
    // Unless the work put another environment in place itself.
    if (process.env === watched) process.env = environment;
  }
}

/** A digest of the variables' present values (absent ones included as absent): equal digests, equal values. */
export function environmentDigest(names: readonly string[]): string {
  const values = names.includes(WHOLE_ENVIRONMENT)
    ? Object.entries(process.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : names.map((name) => [name, process.env[name] ?? null]);
  return sha256Hex(JSON.stringify(values));
}

/** agentport's own code: the sources and what the build made of them. */
function ownFolders(): string[] {
  const root = installationRoot() ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  return [path.join(root, 'src') + path.sep, path.join(root, 'dist') + path.sep];
}

/** The file of the code that made the access `trap` answers: the first frame outside Node's own modules. */
function readerFile(trap: Trap): string | undefined {
  // Put back as they were, never called here.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  let frames: NodeJS.CallSite[] | undefined;
  try {
    Error.stackTraceLimit = STACK_FRAMES;
    Error.prepareStackTrace = (_, callSites) => callSites;
    Error.captureStackTrace(holder, trap);
    // The stack is made when first read: while the frames are what prepareStackTrace gives.
    frames = holder.stack;
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
  for (const frame of Array.isArray(frames) ? frames : []) {
    const file = frame.getFileName();
    if (!file || file.startsWith('node:')) continue;
    return file.startsWith('file:') ? fileURLToPath(file) : file;
  }
  return undefined;
}
