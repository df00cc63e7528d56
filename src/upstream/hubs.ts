/**
 * Which upstream hub each loaded agents folder has, apart from the hub's own
 * code: a server hands a hub over on reload without loading the upstream
 * client, which a folder without agents/mcp.json servers never needs.
 */
import type { Registry } from '../registry/types.js';
import type { UpstreamHub } from './hub.js';
import { SEPARATOR } from './names.js';

/** A registry's hub (upstreamHubFor in hub.ts makes them), kept as long as the registry is. */
export const hubs = new WeakMap<object, UpstreamHub>();

/**
 * When a reloaded folder replaces `previous` by `next`: with the same
 * agents/mcp.json servers (and the same local names that could clash with
 * upstream ones), `next` keeps the previous hub and its open connections.
 * Otherwise the previous hub is returned: nothing new uses it, and the
 * caller closes it once the runs that still may have ended.
 */
export function handOverUpstreamHub(previous: Registry, next: Registry): UpstreamHub | undefined {
  const hub = hubs.get(previous);
  if (!hub || hubs.get(next) === hub) return undefined;
  if (hubs.has(next) || upstreamKey(previous) !== upstreamKey(next)) return hub;
  hubs.set(next, hub);
  return undefined;
}

/** What a hub is made of: the servers' settings and the local names shaped like `<server>__<tool>`. */
function upstreamKey(registry: Registry): string {
  const servers = [...(registry.upstream?.servers.values() ?? [])];
  const namespaced = [...registry.tools.keys(), ...registry.prompts.keys(), ...registry.agents.keys()]
    .filter((name) => name.includes(SEPARATOR))
    .sort();
  return JSON.stringify({ servers, namespaced });
}
