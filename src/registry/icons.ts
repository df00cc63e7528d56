/**
 * A tool's `icon`: an `https:` or `data:` URL, or an image file inside the agents folder. Checked
 * when the folder loads (a load error naming the field), and read into a data URL for `tools/list`.
 */
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

const ICON_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
};

const KINDS = 'an https: or data:image/ URL, or a .png, .jpg, .svg, .webp or .gif file in the agents folder';

/** What is wrong with an icon, or undefined when it can be served. */
export function iconProblem(icon: string, agentsDir: string): string | undefined {
  if (/^https:\/\/[^/]/i.test(icon)) return undefined;
  if (/^data:/i.test(icon)) return /^data:image\/[\w.+-]+[;,]/i.test(icon) ? undefined : `icon must be ${KINDS}: a data: URL of an image`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(icon) && !/^[a-z]:[\\/]/i.test(icon)) {
    return `icon must be ${KINDS}, got a ${icon.slice(0, icon.indexOf(':') + 1)} URL`;
  }
  if (!ICON_TYPES[path.extname(icon).toLowerCase()]) return `icon must be ${KINDS}, got "${icon}"`;
  const root = path.resolve(agentsDir);
  const file = path.resolve(root, icon);
  try {
    accessSync(file, constants.R_OK);
  } catch (error) {
    return `icon file ${icon} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  // Inside the folder, links followed: a packed folder takes it along, and nothing else is served.
  const real = realpathSync(file);
  const realRoot = realpathSync(root);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return `icon file ${icon} is outside the agents folder`;
  return undefined;
}

/** An icon as MCP hosts take it: a URL as it is, an image file as a data URL. Throws on what {@link iconProblem} refuses. */
export function iconOf(icon: string, agentsDir: string): { src: string; mimeType?: string } {
  const problem = iconProblem(icon, agentsDir);
  if (problem) throw new Error(problem);
  if (/^(https|data):/i.test(icon)) return { src: icon };
  const file = path.resolve(agentsDir, icon);
  const mimeType = ICON_TYPES[path.extname(file).toLowerCase()]!;
  return { src: `data:${mimeType};base64,${readFileSync(file).toString('base64')}`, mimeType };
}
