#!/usr/bin/env node
/**
 * The `agentport` command: runs the program of program.ts on the process's
 * arguments. Nothing else belongs here, so the program can be built without
 * being run.
 */
import { buildProgram, reportFailure } from './program.js';

buildProgram(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch(reportFailure);
