#!/usr/bin/env node
/**
 * The `agentport` command: runs the program of program.ts on the process's
 * arguments. Nothing else belongs here, so the program can be built without
 * being run; and nothing is imported statically, so that in the bundle
 * (scripts/bundle.mjs) this file holds no module its chunks import back: a
 * chunk importing from here could run the command a second time.
 */
const { buildProgram, reportFailure } = await import('./program.js');

buildProgram(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch(reportFailure);
