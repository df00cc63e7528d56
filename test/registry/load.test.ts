/**
 * Loading an agents/ folder through the real registry (jiti, validation,
 * cross-references). Fixture folders live in test/fixtures/agents/.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatIssue, type LoadIssue } from '../../src/definitions/issues.js';
import { loadIssuesOf } from '../../src/registry/errors.js';
import { loadRegistry, loadRegistryOrThrow } from '../../src/registry/load.js';
import { EXAMPLE_AGENTS, FIXTURES } from '../support/paths.js';
import { tempDir } from '../support/mcpClients.js';
import { writeFiles } from '../support/folders.js';

const LOAD_ERRORS = path.join(FIXTURES, 'agents', 'load-errors');

function errorsOf(issues: LoadIssue[]) {
  return issues.filter((i) => i.severity === 'error');
}

function find(issues: LoadIssue[], definition: string, field?: string) {
  return issues.filter((i) => i.definition === definition && (field === undefined || i.field === field));
}

/** Writes a throwaway agents folder: { 'prompts/a.ts': '...' }. */
function agentsFolder(files: Record<string, string>): string {
  const dir = tempDir('agentport-agents-');
  writeFiles(dir, files);
  return dir;
}

const MODEL = `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n`;

describe('what the folder holds that is not loaded', () => {
  it('skips dotfiles, dot-folders and node_modules, as serve --watch ignores them', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'p', toolDescription: 'd', model: 'm', prompt: 'x' });\n`,
      'prompts/.wip/draft.ts': 'this is not TypeScript (',
      'prompts/.draft.ts': 'nor this (',
      '.scratch/loose.prompty': '---\nbroken: [\n---\n',
      'prompts/node_modules/dep/index.ts': 'nor this (',
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
    expect([...registry.prompts.keys()]).toEqual(['p']);
  });

  it('warns of a definition file that is a symbolic link, naming it, and does not load it', async () => {
    const elsewhere = agentsFolder({
      'b.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'b', toolDescription: 'd', model: 'm', prompt: 'x' });\n`,
      'c.prompty': '---\nname: c\nmodel: { api: chat, configuration: { type: openai, name: x } }\n---\nsystem:\nHi\n',
    });
    const dir = agentsFolder({ 'models/m.ts': MODEL });
    mkdirSync(path.join(dir, 'prompts'));
    symlinkSync(path.join(elsewhere, 'b.ts'), path.join(dir, 'prompts', 'b.ts'));
    symlinkSync(path.join(elsewhere, 'c.prompty'), path.join(dir, 'c.prompty'));
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect([...registry.prompts.keys()]).toEqual([]);
    const warnings = issues.filter((i) => i.severity === 'warning' && /symbolic link/.test(i.message)).map((i) => path.basename(i.file));
    expect(warnings.sort()).toEqual(['b.ts', 'c.prompty']);
    expect(errorsOf(issues)).toEqual([]);
  });
});

describe('loading the example agents', () => {
  it('loads every definition with no errors', async () => {
    const { registry, issues } = await loadRegistry({ agentsDir: EXAMPLE_AGENTS });
    expect(errorsOf(issues)).toEqual([]);
    expect([...registry.prompts.keys()].sort()).toEqual([
      'copy_editor',
      'copywriter',
      'docs_reader',
      'editor_in_chief',
      'fact_finder_checker',
      'fact_finder_researcher',
      'faq',
      'house_style',
      'summarize',
      'support',
      'triage_ticket',
    ]);
    expect([...registry.tools.keys()].sort()).toEqual(['current_time', 'lookup_order']);
    expect([...registry.models.keys()]).toEqual(['main']);
  });

  it('[PR-3] resolves includes in place, using only the included prompt text', async () => {
    const { registry } = await loadRegistry({ agentsDir: EXAMPLE_AGENTS });
    const support = registry.prompts.get('support')!;
    expect(support.systemText).toBe(
      'You are the support assistant of an online shop.\n\n' +
        (registry.prompts.get('house_style')!.definition.prompt as string) +
        '\n\nUse lookup_order for anything about a specific order.',
    );
  });

  it('loads files written against @standardagents/spec unchanged', async () => {
    const { registry } = await loadRegistry({ agentsDir: EXAMPLE_AGENTS });
    // triage_ticket.ts imports definePrompt from '@standardagents/spec'.
    expect(registry.prompts.get('triage_ticket')!.definition.requiredSchema).toBeDefined();
  });
});

describe('a folder full of mistakes', () => {
  it('reports every problem in one report, each naming file, definition and field', async () => {
    const thrown = await loadRegistryOrThrow({ agentsDir: LOAD_ERRORS }).catch((error: unknown) => error);
    expect(thrown).toMatchObject({ name: 'AgentportError', code: 'DEFINITION_INVALID' });
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    expect(loadIssuesOf(thrown)).toEqual(issues);
    const report = issues.map(formatIssue).join('\n');
    expect(report).toContain('prompts/no_model.ts "no_model" field model: unknown model "gpt5"');
    expect(report).toContain('circular include: loop_a -> loop_b -> loop_a');
    expect(report).toContain('prompts/empty_description.ts "empty_description" field toolDescription: toolDescription must not be empty');
    expect(report).toContain('prompts/bad_choice.ts "bad_choice" field toolChoice');
    expect(report).toContain('prompts/unknown_refs.ts "unknown_refs" field tools[0]: unknown tool "lookup_ordr"');
    expect(errorsOf(issues).length).toBe(15);
  });

  it('[PR-1] requires a non-empty toolDescription and a defined model', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    expect(find(issues, 'empty_description', 'toolDescription')).toHaveLength(1);
    expect(find(issues, 'no_model', 'model')[0]!.message).toBe('unknown model "gpt5"');
  });

  it('[PR-1] requires name, toolDescription, prompt and model, and a valid prompt part array', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'p', prompt: [{ type: 'quote', content: 'x' }] } as never);\n`,
      'prompts/q.ts': `export default { toolDescription: 'no name', model: 'm', prompt: 'x' };\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    const p = find(issues, 'p');
    expect(p.map((i) => i.field).sort()).toEqual(['model', 'prompt', 'toolDescription']);
    expect(p.find((i) => i.field === 'prompt')!.message).toMatch(/must be a string or an array of/);
    expect(p.find((i) => i.field === 'model')!.message).toBe('model is required');
    const q = issues.filter((i) => i.file.endsWith('q.ts'));
    expect(q.map((i) => i.field)).toEqual(['name']);
  });

  it('[PR-2] checks toolChoice, reasoning.effort and recentImageThreshold', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    const fields = find(issues, 'bad_choice').map((i) => i.field);
    expect(fields).toEqual(['toolChoice', 'reasoning.effort', 'recentImageThreshold']);
    expect(find(issues, 'bad_choice', 'recentImageThreshold')[0]!.message).toBe('recentImageThreshold must be a positive integer');
  });

  it('[PR-4] rejects circular includes naming the cycle, and includes of unknown prompts', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    expect(find(issues, 'loop_a', 'prompt')[0]!.message).toBe('circular include: loop_a -> loop_b -> loop_a');
    expect(find(issues, 'unknown_refs', 'prompt')[0]!.message).toContain('include of unknown prompt "nowhere"');
  });

  it('[PR-5] rejects unknown tool names by name, in a {name, env} config and in a sub-prompt config', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    const tools = find(issues, 'unknown_refs').filter((i) => i.field?.startsWith('tools'));
    expect(tools.map((i) => [i.field, i.message])).toEqual([
      ['tools[0]', 'unknown tool "lookup_ordr"'],
      ['tools[1]', 'unknown tool "send_mail"'],
      ['tools[3]', 'unknown tool "no_such_prompt"'],
    ]);
  });

  it('[PR-5] accepts tools by name, by {name, env, options}, and prompts as sub-prompts', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'tools/search_docs.ts': `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'Search.', execute: async () => ({ status: 'success' }) });\n`,
      'prompts/helper.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'helper', toolDescription: 'Helps.', model: 'm', prompt: 'x' });\n`,
      'prompts/main.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'main', toolDescription: 'Main.', model: 'm', prompt: 'x', tools: [{ name: 'search_docs', env: { K: 'v' }, options: { n: 1 } }, { name: 'helper', includeToolCalls: false }] });\n`,
      'prompts/other.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'other', toolDescription: 'Other.', model: 'm', prompt: 'x', tools: ['search_docs', 'helper'] });\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues)).toEqual([]);
  });

  it('[PR-5] refuses a tool listed twice in one prompt, naming both places', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'tools/search_docs.ts': `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'Search.', execute: async () => ({ status: 'success' }) });\n`,
      'prompts/main.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'main', toolDescription: 'Main.', model: 'm', prompt: 'x', tools: ['search_docs', 'nope', { name: 'search_docs', options: { limit: 5 } }] });\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues).map((i) => [i.field, i.message])).toEqual([
      ['tools[1]', 'unknown tool "nope"'],
      ['tools[2]', '"search_docs" is listed twice (tools[0] and tools[2]): list it once, with its options'],
    ]);
  });

  it('[PR-9] rejects an exposed requiredSchema with a thread_id field, which every exposed tool reserves', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nimport { z } from 'zod';\nexport default definePrompt({ name: 'p', toolDescription: 'x', model: 'm', prompt: 'x', exposeAsTool: true, requiredSchema: z.object({ thread_id: z.string() }) });\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues)).toEqual([expect.objectContaining({ definition: 'p', field: 'requiredSchema.thread_id' })]);
  });

  it('[PR-14] rejects unknown hook ids', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    expect(find(issues, 'unknown_refs', 'hooks[0]')[0]!.message).toBe('unknown hook id "redact_cards"');
  });

  it('[TL-1] requires a non-empty description and a zod object for args', async () => {
    const { issues } = await loadRegistry({ agentsDir: LOAD_ERRORS });
    expect(find(issues, 'lookup_order').map((i) => i.field)).toEqual(['description', 'args']);
  });

  it('[TL-1] accepts a tool with no args property', async () => {
    const { registry } = await loadRegistry({ agentsDir: EXAMPLE_AGENTS });
    expect(registry.tools.get('current_time')!.definition.args).toBeUndefined();
  });

  it('[TL-8] warns about names that are not snake_case or longer than 64 characters, without rejecting', async () => {
    const long = 'a'.repeat(65);
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'tools/GoodTool.ts': `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'x', execute: async () => ({ status: 'success' }) });\n`,
      [`tools/${long}.ts`]: `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'x', execute: async () => ({ status: 'success' }) });\n`,
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues)).toEqual([]);
    expect(
      issues
        .filter((i) => i.severity === 'warning')
        .map((i) => i.definition)
        .sort(),
    ).toEqual(['GoodTool', long]);
    expect(registry.tools.has('GoodTool')).toBe(true);
  });

  it('[TL-8] rejects two tools with the same name', async () => {
    const tool = `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'x', execute: async () => ({ status: 'success' }) });\n`;
    const dir = agentsFolder({ 'models/m.ts': MODEL, 'tools/send.ts': tool, 'tools/mail/send.ts': tool });
    const { issues } = await loadRegistry({ agentsDir: dir });
    const duplicate = errorsOf(issues);
    expect(duplicate).toHaveLength(1);
    expect(duplicate[0]!.message).toMatch(/^duplicate tool "send" \(also defined in /);
  });

  it('reports a file that does not compile, naming it, along with the other problems', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/broken.ts': `export default definePrompt({ name: 'x',, });\n`,
      'prompts/ok.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'ok', toolDescription: 'Fine.', model: 'nope', prompt: 'x' });\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    const errors = errorsOf(issues);
    expect(errors).toHaveLength(2);
    expect(errors[0]!.file).toMatch(/broken\.ts:1:41$/);
    expect(errors[0]!.message).toMatch(/^cannot load: syntax error: Unexpected token\n> 1 \| export default definePrompt/);
    expect(errors[1]!.message).toBe('unknown model "nope"');
  });

  it('names the define function and what it was given when a definition is not an object it can mark', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'tools/none.js': `import { defineTool } from 'agentport';\nexport default defineTool();\n`,
      'prompts/text.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt('hello' as never);\n`,
      'hooks/list.ts': `import { defineHook } from 'agentport';\nexport default defineHook([] as never);\n`,
      'tools/twice.ts': `import { definePrompt, defineTool } from 'agentport';\nexport default defineTool(definePrompt({ name: 'p' } as never) as never);\n`,
      'tools/frozen.ts': `import { defineTool } from 'agentport';\nexport default defineTool(Object.freeze({ description: 'x' }) as never);\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    const messages = Object.fromEntries(errorsOf(issues).map((issue) => [path.basename(issue.file), issue.message]));
    expect(messages).toEqual({
      'none.js': 'cannot load: defineTool() takes the definition as an object; it was given undefined',
      'text.ts': 'cannot load: definePrompt() takes the definition as an object; it was given a string',
      'list.ts': 'cannot load: defineHook() takes the definition as an object; it was given an array',
      'twice.ts': 'cannot load: defineTool() was given what definePrompt() made: a definition has one kind',
      'frozen.ts': 'cannot load: defineTool() cannot mark a frozen or sealed object: pass the definition before freezing it',
    });
  });

  it('warns about unknown fields (likely typos) without failing', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'p', toolDescription: 'x', model: 'm', prompt: 'x', exposeAsToool: true } as never);\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(issues).toEqual([expect.objectContaining({ severity: 'warning', definition: 'p', field: 'exposeAsToool' })]);
  });

  it("[PY-1] reports .prompty problems with the file and line, along with the other files' problems", async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/ok.prompty': '---\ndescription: Fine.\nmodel: m\nexposeAsTool: true\n---\nsystem:\nHello.\n',
      'prompts/bad.prompty': '---\ndescription: Broken.\nmodel: nope\nexposeAsTool: "yes"\n---\nsystem:\nHi.\n',
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(registry.prompts.get('ok')?.prompty).toBeDefined();
    const errors = errorsOf(issues);
    // Its unknown model comes in the same pass.
    expect(errors).toEqual([
      expect.objectContaining({ field: 'exposeAsTool' }),
      expect.objectContaining({ field: 'model', definition: 'bad', message: 'unknown model "nope"' }),
    ]);
    expect(errors[0]!.file).toMatch(/prompts\/bad\.prompty:4$/);
  });

  it('loads named exports made with the define functions, and plain-object default exports', async () => {
    const dir = agentsFolder({
      'models/m.mjs': `export default { name: 'm', provider: 'openai', model: 'x' };\n`,
      'prompts/many.ts': `import { definePrompt } from 'agentport';\nexport const one = definePrompt({ name: 'one', toolDescription: 'x', model: 'm', prompt: 'x' });\nexport const two = definePrompt({ name: 'two', toolDescription: 'x', model: 'm', prompt: 'x' });\nexport const notADefinition = { name: 'nope' };\n`,
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues)).toEqual([]);
    expect([...registry.prompts.keys()].sort()).toEqual(['one', 'two']);
    expect(registry.models.has('m')).toBe(true);
  });
});

describe('reasoning settings', () => {
  it('[PR-12] warns that reasoning.maxTokens is not sent to a model with the OpenAI reasoning style', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'models/r.ts': `import { defineModel } from 'agentport';\nexport default defineModel({ name: 'r', provider: 'openai', model: 'x', reasoningStyle: 'openrouter' });\n`,
      'prompts/a.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'a', toolDescription: 'x', model: 'm', prompt: 'x', reasoning: { effort: 'low', maxTokens: 100 } });\n`,
      'prompts/b.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'b', toolDescription: 'x', model: 'r', prompt: 'x', reasoning: { effort: 'low', maxTokens: 100 } });\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(issues).toEqual([expect.objectContaining({ severity: 'warning', definition: 'a', field: 'reasoning.maxTokens' })]);
  });
});

describe('the modules definition files import', () => {
  it('gives definition files the zod and the API agentport runs on, not second copies', async () => {
    const dir = agentsFolder({
      'models/m.ts': `import { defineModel } from 'agentport-mcp';\nexport default defineModel({ name: 'm', provider: 'openai', model: 'x' });\n`,
      'prompts/p.ts': `import { definePrompt } from 'agentport';\nimport { z } from 'zod';\nexport default definePrompt({ name: 'p', toolDescription: 'P.', model: 'm', prompt: 'P.', requiredSchema: z.object({ city: z.string() }) });\n`,
    });
    const registry = await loadRegistryOrThrow({ agentsDir: dir, cacheDir: false });
    const schema = registry.prompts.get('p')!.definition.requiredSchema;
    const { z } = await import('zod');
    // The very class agentport's own zod has (zod's instanceof also accepts other copies: compare the constructors).
    expect(schema!.constructor).toBe(z.ZodObject);
  });
});

describe('icons', () => {
  it('[AG-6] refuses an icon that cannot be served, as a load error on the icon field, beside the other problems', async () => {
    const icon = (name: string, value: string, extra = '') =>
      `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: '${name}', toolDescription: 'd', model: 'm', prompt: 'x', exposeAsTool: true, icon: ${JSON.stringify(value)}${extra} });\n`;
    const root = tempDir('agentport-icons-');
    const dir = writeFiles(path.join(root, 'agents'), {
      'models/m.ts': MODEL,
      'icons/ok.png': 'png',
      'prompts/missing.ts': icon('missing', 'nope.png', ", tools: ['nowhere']"),
      'prompts/plain_http.ts': icon('plain_http', 'http://example.com/a.png'),
      'prompts/ftp.ts': icon('ftp', 'ftp://x/y.png'),
      'prompts/text.ts': icon('text', 'data:text/plain,hi'),
      'prompts/kind.ts': icon('kind', 'icons/ok.txt'),
      'prompts/outside.ts': icon('outside', '../outside.png'),
      'prompts/fine.ts': icon('fine', 'icons/ok.png'),
      'prompts/fine_url.ts': icon('fine_url', 'https://example.com/a.png'),
    });
    writeFileSync(path.join(root, 'outside.png'), 'png');
    const { issues } = await loadRegistry({ agentsDir: dir });
    const byPrompt = (name: string) =>
      errorsOf(issues)
        .filter((i) => i.definition === name)
        .map((i) => [i.field, i.message]);
    expect(byPrompt('missing')).toEqual([
      ['tools[0]', expect.stringContaining('unknown tool "nowhere"')],
      ['icon', 'icon file nope.png cannot be read (ENOENT)'],
    ]);
    expect(byPrompt('plain_http')).toEqual([['icon', expect.stringContaining('got a http: URL')]]);
    expect(byPrompt('ftp')).toEqual([['icon', expect.stringContaining('got a ftp: URL')]]);
    expect(byPrompt('text')).toEqual([['icon', expect.stringContaining('a data: URL of an image')]]);
    expect(byPrompt('kind')).toEqual([['icon', expect.stringContaining('got "icons/ok.txt"')]]);
    expect(byPrompt('outside')).toEqual([['icon', 'icon file ../outside.png is outside the agents folder']]);
    expect(byPrompt('fine')).toEqual([]);
    expect(byPrompt('fine_url')).toEqual([]);
  });
});

describe('every problem at once', () => {
  it('[PR-5] reports the unknown references of a definition that has other errors in the same pass', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/a.ts': `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: 'a', toolDescription: 'd', model: 'nomodel', exposeAsTool: true, prompt: 'x', includeChat: 'yes', hooks: ['nohook'], tools: ['nope', { name: 'nada' }, 7] } as never);\n`,
      'agents/pair.ts': `import { defineAgent } from 'agentport';\nexport default defineAgent({ name: 'pair', type: 'dual_ai', maxSessionTurns: 'ten', sideA: { prompt: 'ghost' }, sideB: { prompt: 'a' } } as never);\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(
      errorsOf(issues)
        .filter((i) => i.definition === 'a')
        .map((i) => [i.field, i.message.replace(/;.*$/, '')]),
    ).toEqual([
      ['includeChat', expect.stringContaining('includeChat must be a boolean')],
      ['tools[2]', expect.any(String)],
      ['model', 'unknown model "nomodel"'],
      ['tools[0]', 'unknown tool "nope"'],
      ['tools[1]', 'unknown tool "nada"'],
      ['hooks[0]', 'unknown hook id "nohook"'],
    ]);
    const pair = errorsOf(issues).filter((i) => i.definition === 'pair');
    expect(pair.map((i) => i.field)).toContain('sideA.prompt');
    expect(pair.find((i) => i.field === 'sideA.prompt')!.message).toBe('unknown prompt "ghost"');
    // A reference to a rejected prompt says why it is not there (see below for .prompty files).
    expect(pair.find((i) => i.field === 'sideB.prompt')!.message).toMatch(/^prompt "a" is not loaded: its definition in .* has errors/);
  });

  it('[PR-5] [PY-1] does the same for a .prompty file rejected for a field of its own', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/q.prompty': '---\nname: q\ndescription: d\nmodel: nomodel\ntoolChoice: always\nhooks: [nohook]\ntools: [nope]\n---\nHi.\n',
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues).map((i) => [i.field, i.message.replace(/ \(did you mean.*$/, '')])).toEqual([
      ['toolChoice', 'expected one of auto, none, required, got string "always"'],
      ['model', 'unknown model "nomodel"'],
      ['tools[0]', 'unknown tool "nope"'],
      ['hooks[0]', 'unknown hook id "nohook"'],
    ]);
  });
});
