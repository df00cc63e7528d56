import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installationRoot } from '../../installation.js';
import type { Command } from 'commander';
import { VERSION } from '../../server/version.js';
import { CommandError, DEFAULT_AGENTS_DIR, shownPath } from '../context.js';

/**
 * `agentport init [dir]`: writes a small agents folder that loads, serves and
 * type-checks, then prints the next two commands. Existing files are never
 * overwritten: any conflict refuses the whole scaffold, naming the files.
 */
export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description('create an agents folder: a model, an exposed prompt, a tool, a .prompty file, package.json and tsconfig.json')
    .argument('[dir]', 'the folder to create or fill', DEFAULT_AGENTS_DIR)
    .action(async (dir: string) => {
      const target = path.resolve(dir);
      if (existsSync(target) && !statSync(target).isDirectory()) throw new CommandError(`${shownPath(target)} exists and is not a folder`);
      // Loaded here: serve, which every host starts, never needs the templates.
      const { scaffoldFiles } = await import('../scaffold/templates.js');
      const files = scaffoldFiles({ packageName: packageNameFor(target), agentportSpec: agentportSpec() });
      const existing = files.map(([file]) => file).filter((file) => existsSync(path.join(target, file)));
      if (existing.length) {
        throw new CommandError(
          `not overwriting existing file${existing.length === 1 ? '' : 's'} in ${shownPath(target)}: ${existing.join(', ')} (move ${existing.length === 1 ? 'it' : 'them'} away or choose another folder)`,
        );
      }
      for (const [file, content] of files) {
        const full = path.join(target, file);
        mkdirSync(path.dirname(full), { recursive: true });
        writeFileSync(full, content, { flag: 'wx' });
      }
      const shown = shownPath(target);
      const command = commandName();
      const here = path.relative(process.cwd(), target) === '';
      process.stdout.write(
        [
          `Created ${shown}${path.sep}: ${files.map(([file]) => file).join(', ')}`,
          '',
          'Next:',
          ...aligned([
            [`${here ? '' : `cd ${quote(shown)} && `}npm install`, 'agentport-mcp, zod and typescript, for your editor and tsc'],
            [`${command} doctor --types --dir .`, 'load, validate and type-check the folder'],
          ]),
          '',
        ].join('\n'),
      );
    });
}

/** An npm package name from the folder's name. */
function packageNameFor(dir: string): string {
  const name = path
    .basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '');
  return name || 'agents';
}

/**
 * The agentport-mcp dependency: `^VERSION` when this agentport was installed
 * from the registry; from a checkout (not under node_modules) a `file:`
 * reference to it, so `npm install` works before (or without) publishing.
 */
function agentportSpec(): string {
  const root = installationRoot();
  if (!root || root.split(path.sep).includes('node_modules')) return `^${VERSION}`;
  return `file:${root}`;
}

/** How the user ran agentport: the `agentport` command, or `node .../dist/cli/main.js` from a checkout. */
function commandName(): string {
  const script = process.argv[1] ?? '';
  return path.basename(script) === 'main.js' ? `node ${quote(script)}` : 'agentport';
}

/** `  command   # comment` lines with the comments in one column. */
function aligned(lines: Array<[string, string]>): string[] {
  const width = Math.max(...lines.map(([command]) => command.length));
  return lines.map(([command, comment]) => `  ${command.padEnd(width)}   # ${comment}`);
}

function quote(value: string): string {
  return /^[\w./:@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
