// `node --import ./register.mjs`: runs @modelcontextprotocol/conformance (written for Node 22) on Node 20.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
