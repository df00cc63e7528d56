/**
 * Who made a call during a full load: the definitions' own code, or someone else. What the definitions read while
 * they loaded (an environment variable, environment.ts; a file, fileReads.ts) shaped the start-up cache, so it
 * becomes part of its key; what others read does not.
 *
 * A call counts when the code that made it (the innermost frame with a file) is the definitions' own: a file under
 * the agents folder outside its `node_modules`, or a helper elsewhere outside any `node_modules`. Not agentport's
 * own code, not Node's (`node:` frames: a child process handed the environment, the module loader reading a file
 * for `require`), not a package's: packages read the environment and their own files for their own ends, and the
 * install records the cache stamps already stand for their files.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installationPaths } from '../../installation.js';

/** The function that was called (a proxy's trap, a watched `fs` function): the stack is cut there, so its caller's frame comes first. */
export type Called = (...args: never[]) => unknown;

/** Frames looked at to find who made a call. */
const STACK_FRAMES = 10;

const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

/** Whether a file is the definitions' own code (see above). Made before the load: it reads agentport's package.json. */
export function definitionsCode(agentsDir: string): (file: string | undefined) => boolean {
  const folder = path.resolve(agentsDir) + path.sep;
  // agentport's own code, by every path its installation is known by.
  const own = installationPaths().flatMap((root) => [path.join(root, 'src') + path.sep, path.join(root, 'dist') + path.sep]);
  return (file) => {
    if (file === undefined || file.startsWith('node:')) return false;
    // An agents folder may itself lie in a node_modules folder (shipped in a package): only its own packages are out.
    if (file.startsWith(folder)) return !file.slice(folder.length - 1).includes(NODE_MODULES);
    return !file.includes(NODE_MODULES) && !own.some((prefix) => file.startsWith(prefix));
  };
}

/** The file of the code that called `called`: the innermost frame that names a file. */
export function callerFile(called: Called): string | undefined {
  // Put back as they were, never called here.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  let frames: NodeJS.CallSite[] | undefined;
  try {
    Error.stackTraceLimit = STACK_FRAMES;
    Error.prepareStackTrace = (_, callSites) => callSites;
    Error.captureStackTrace(holder, called);
    // The stack is made when first read: while the frames are what prepareStackTrace gives.
    frames = holder.stack;
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
  for (const frame of Array.isArray(frames) ? frames : []) {
    const file = frame.getFileName();
    if (file) return file.startsWith('file:') ? fileURLToPath(file) : file;
  }
  return undefined;
}
