/**
 * Definition checks through the real loader (jiti, schemas, cross-references):
 * wrong types against missing fields, unknown keys, fields accepted but not
 * acted on, deprecated agent fields and hook names. Folders are written to a
 * temp directory, or read from test/fixtures/agents/definition-warnings/.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LoadIssue } from '../../src/definitions/issues.js';
import { HOOK_NAMES, definitionSchemas } from '../../src/definitions/schemas.js';
import type { HookName } from '../../src/definitions/types.js';
import { describeSchemaIssues, validateDefinition } from '../../src/definitions/validate.js';
import { loadRegistry } from '../../src/registry/load.js';
import { FIXTURES } from '../support/paths.js';
import { writeFiles } from '../support/folders.js';

const WARNINGS_FOLDER = path.join(FIXTURES, 'agents', 'definition-warnings');

/** Writes a throwaway agents folder: { 'prompts/a.ts': '...' }. */
function agentsFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentport-definitions-'));
  writeFiles(dir, files);
  return dir;
}

const MODEL = `export default { name: 'm', provider: 'openai', model: 'x' };\n`;
const TOOL = `import { defineTool } from 'agentport';\nexport default defineTool({ description: 'Search.', execute: async () => ({ status: 'success' }) });\n`;
const prompt = (name: string, extra = '') =>
  `import { definePrompt } from 'agentport';\nexport default definePrompt({ name: '${name}', toolDescription: 'x', model: 'm', prompt: 'x'${extra ? `, ${extra}` : ''} } as never);\n`;
const agent = (fields: string) => `import { defineAgent } from 'agentport';\nexport default defineAgent({ ${fields} } as never);\n`;

const errorsOf = (issues: LoadIssue[]) => issues.filter((i) => i.severity === 'error');
const warningsOf = (issues: LoadIssue[]) => issues.filter((i) => i.severity === 'warning');
const at = (issues: LoadIssue[], definition: string, field: string) =>
  issues.filter((i) => i.definition === definition && i.field === field);
/** The one issue of `definition` at `field`. */
function one(issues: LoadIssue[], definition: string, field: string): LoadIssue {
  const found = at(issues, definition, field);
  expect(found, `issues at ${definition} ${field}: ${JSON.stringify(issues, null, 1)}`).toHaveLength(1);
  return found[0]!;
}

describe('wrong type is not "missing"', () => {
  it('[AG-6] reports a wrongly typed prompt field as a wrong type naming the expected one', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': `export default { name: 'p', toolDescription: 42, model: 'm', prompt: 'x', includeChat: 'yes' };\n`,
      'prompts/q.ts': `export default { name: 'q', model: 'm', prompt: 7 };\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'p', 'toolDescription')).toMatchObject({
      severity: 'error',
      message: 'toolDescription must be a string, got number 42',
    });
    expect(one(issues, 'p', 'includeChat').message).toBe('includeChat must be a boolean, got string "yes"');
    // Absent is "required"; a wrong type for a union names what the union accepts.
    expect(one(issues, 'q', 'toolDescription').message).toBe('toolDescription is required');
    expect(one(issues, 'q', 'prompt').message).toBe(
      'prompt must be a string or an array of {type:"text",content} / {type:"include",prompt} parts, got number 7',
    );
  });

  it('[AG-6] reports a wrongly typed agent side field naming the side, the field and the expected type', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/helper.ts': prompt('helper'),
      'agents/a.ts': agent(
        `name: 'a', type: 'dual_ai', maxSessionTurns: 4, sideA: { prompt: 'helper', maxSteps: 'x', stopOnResponse: 1 }, sideB: { maxSteps: 1.5 }`,
      ),
      'agents/b.ts': agent(`name: 'b', sideA: 'helper', maxSessionTurns: '3'`),
      'agents/c.ts': agent(`name: 'c', sideA: { prompt: 'helper', sessionStop: { name: 'done', messageProperty: 5 }, maxSteps: 0 }`),
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'a', 'sideA.maxSteps').message).toBe('sideA.maxSteps must be a number, got string "x"');
    expect(one(issues, 'a', 'sideA.stopOnResponse').message).toBe('sideA.stopOnResponse must be a boolean, got number 1');
    expect(one(issues, 'a', 'sideB.maxSteps').message).toBe('sideB.maxSteps must be an integer, got number 1.5');
    expect(one(issues, 'a', 'sideB.prompt').message).toBe('sideB.prompt is required');
    expect(one(issues, 'b', 'sideA').message).toBe('sideA must be an object, got string "helper"');
    expect(one(issues, 'b', 'maxSessionTurns').message).toBe('maxSessionTurns must be a number, got string "3"');
    expect(one(issues, 'c', 'sideA.sessionStop.messageProperty').message).toBe(
      'sideA.sessionStop.messageProperty must be a string, got number 5',
    );
    expect(one(issues, 'c', 'sideA.maxSteps').message).toBe('sideA.maxSteps must be greater than 0, got number 0');
  });

  it('[AG-6] reports a wrongly typed nested field (tool config, reasoning, subagent config) at its own path', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'tools/search_docs.ts': TOOL,
      'prompts/p.ts': prompt(
        'p',
        `tools: ['search_docs', { name: 3 }, 42, { name: 'search_docs', env: { KEY: 1234 } }, { name: 'search_docs', immediate: { nameEnv: 3 } }, { name: 'search_docs', resumable: true }], reasoning: { effort: 'extreme', maxTokens: '9' }`,
      ),
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'p', 'tools[1].name').message).toBe('tools[1].name must be a string, got number 3');
    expect(one(issues, 'p', 'tools[2]').message).toBe('tools[2] must be a string or an object, got number 42');
    // Values under env are not shown: they may be secrets.
    expect(one(issues, 'p', 'tools[3].env.KEY').message).toBe('tools[3].env.KEY must be a string, got a number');
    expect(one(issues, 'p', 'tools[4].immediate.nameEnv').message).toBe('tools[4].immediate.nameEnv must be a string, got number 3');
    expect(one(issues, 'p', 'tools[5].resumable').message).toBe('tools[5].resumable must be false or an object, got boolean true');
    expect(one(issues, 'p', 'reasoning.effort').message).toBe(
      'reasoning.effort must be one of "low", "medium", "high", got string "extreme"',
    );
    expect(one(issues, 'p', 'reasoning.maxTokens').message).toBe('reasoning.maxTokens must be a number, got string "9"');
  });

  it('[AG-6] reports wrong types in models, tools and hooks too', async () => {
    const dir = agentsFolder({
      'models/m.ts': `export default { name: 'm', provider: 'azure', model: 'x', temperature: 'hot', baseURL: 'not a url' };\n`,
      'tools/t.ts': `export default { description: 'x', execute: 'run' };\n`,
      'tools/u.ts': `export default { description: 'x' };\n`,
      'hooks/h.ts': `export default { id: 'h', hook: 'before_everything', execute: () => {} };\n`,
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'm', 'provider').message).toBe(
      'provider must be "openai" or an object with a complete() method, got string "azure"',
    );
    expect(one(issues, 'm', 'temperature').message).toBe('temperature must be a number, got string "hot"');
    expect(one(issues, 'm', 'baseURL').message).toBe('baseURL must be a URL, got string "not a url"');
    expect(one(issues, 't', 'execute').message).toBe('execute must be a function, got string "run"');
    expect(one(issues, 'u', 'execute').message).toBe('execute is required');
    expect(one(issues, 'h', 'hook').message).toMatch(
      /^hook must be one of "filter_messages", .*"after_subagent_created", got string "before_everything"$/,
    );
  });

  it('[AG-6] keeps the details of a structured prompt part under the prompt field', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': prompt('p', `prompt: [{ type: 'text', content: 'a' }, { type: 'quote', content: 'b' }]`).replace(", prompt: 'x'", ''),
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'p', 'prompt').message).toBe(
      'prompt must be a string or an array of {type:"text",content} / {type:"include",prompt} parts (prompt[1].type must be one of "text", "include", got string "quote")',
    );
  });

  it('[AG-6] looks the value up at the issue path: a field set to undefined counts as missing', () => {
    const schema = z.strictObject({ a: z.string(), b: z.object({ c: z.number() }) });
    const value = { a: undefined, b: { c: 'x' } };
    const parsed = schema.safeParse(value);
    expect(parsed.success).toBe(false);
    expect(describeSchemaIssues(parsed.error!.issues, value, 'thing')).toEqual([
      { severity: 'error', field: 'a', message: 'a is required' },
      { severity: 'error', field: 'b.c', message: 'b.c must be a number, got string "x"' },
    ]);
  });
});

describe('unknown keys warn', () => {
  it('[AG-6] warns about an unknown key inside sideA/sideB, with a close known name', async () => {
    const { issues } = await loadRegistry({ agentsDir: WARNINGS_FOLDER });
    expect(errorsOf(issues)).toEqual([]);
    expect(one(issues, 'pair', 'sideB.stopTol')).toMatchObject({
      severity: 'warning',
      message: 'unknown side field "stopTol" in sideB is ignored (did you mean "stopTool"?)',
    });
    expect(one(issues, 'pair', 'sideB.stopTol').file).toMatch(/definition-warnings\/agents\/pair\.ts$/);
  });

  it('[AG-6] warns about unknown keys of a tool config, by what the name refers to', async () => {
    const { issues } = await loadRegistry({ agentsDir: WARNINGS_FOLDER });
    expect(one(issues, 'main', 'tools[1].includeErrors')).toMatchObject({
      severity: 'warning',
      message: 'unknown key "includeErrors" in the config of tool "search_docs" is ignored (it takes name, env, options, timeoutMs)',
    });
    expect(one(issues, 'main', 'tools[2].options')).toMatchObject({ severity: 'warning' });
    expect(one(issues, 'main', 'tools[2].options').message).toMatch(
      /^unknown key "options" in the config of prompt "helper" \(a sub-prompt config\) is ignored/,
    );
    expect(one(issues, 'main', 'tools[3].initAttachmentProperty').message).toMatch(
      /in the config of agent "pair" \(a subagent config\) is ignored .*\(did you mean "initAttachmentsProperty"\?\)$/,
    );
    // Known keys of the right kind do not warn.
    expect(at(issues, 'main', 'tools[2].includeToolCalls')).toEqual([]);
    expect(at(issues, 'main', 'tools[3].initUserMessageProperty')).toEqual([]);
  });

  it('[AG-6] warns about unknown top-level and nested keys of every kind, never failing on them', async () => {
    const dir = agentsFolder({
      'models/m.ts': `export default { name: 'm', provider: 'openai', model: 'x', temprature: 0.2 };\n`,
      'prompts/p.ts': prompt(
        'p',
        `reasoning: { effort: 'low', budget: 5 }, variables: [{ name: 'V', type: 'text', required: false, description: 'v', secret: true }]`,
      ),
      'agents/a.ts': agent(`name: 'a', sideA: { prompt: 'p', sessionStop: { name: 'done', message: 'text' } }, colour: 'blue'`),
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(errorsOf(issues)).toEqual([]);
    expect(
      warningsOf(issues)
        .map((i) => [i.definition, i.field])
        .sort(),
    ).toEqual([
      ['a', 'colour'],
      ['a', 'sideA.sessionStop.message'],
      ['m', 'temprature'],
      ['p', 'reasoning.budget'],
      ['p', 'variables[0].secret'],
    ]);
    expect(one(issues, 'm', 'temprature').message).toBe('unknown model field "temprature" is ignored (did you mean "temperature"?)');
    expect(registry.agents.has('a')).toBe(true);
  });
});

describe('fields accepted but not acted on warn', () => {
  it('[AG-6] [SA-1] accepts subagent fields for a dual_ai agent and warns about them on an ai_human agent', async () => {
    const { issues } = await loadRegistry({ agentsDir: WARNINGS_FOLDER });
    for (const field of ['blocking', 'immediate', 'optional', 'resumable', 'initAgentNameProperty']) {
      expect(at(issues, 'main', `tools[3].${field}`)).toEqual([]);
    }
    expect(one(issues, 'main', 'tools[4].blocking')).toMatchObject({
      severity: 'warning',
      message: 'blocking is ignored: only dual_ai agents run as subagents; "legacy" is an ai_human agent and runs as a sub-prompt',
    });
  });

  it('[AG-6] warns about agent fields that have no effect: maxSessionTurns and sideB of ai_human; and a dual_ai agent without maxSessionTurns', async () => {
    const { issues } = await loadRegistry({ agentsDir: WARNINGS_FOLDER });
    expect(one(issues, 'legacy', 'maxSessionTurns')).toMatchObject({ severity: 'warning' });
    expect(one(issues, 'legacy', 'maxSessionTurns').message).toContain('only dual_ai sessions have several turns');
    expect(one(issues, 'legacy', 'sideB').message).toBe('side B of an ai_human agent is the human: its prompt is not run');
    // An icon is published with the tool now (tools/list icons): no warning.
    expect(at(issues, 'legacy', 'icon')).toEqual([]);
    expect(one(issues, 'pair', 'maxSessionTurns').message).toContain('sessions will stop after the runtime default of 20 turns');
  });

  it('[AG-6] rejects a dual_ai agent without sideB, stopToolResponseProperty without stopTool, and exposeAsTool without toolDescription', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/w.ts': prompt('w'),
      'agents/a.ts': agent(`name: 'a', type: 'dual_ai', maxSessionTurns: 2, sideA: { prompt: 'w' }`),
      'agents/b.ts': agent(`name: 'b', sideA: { prompt: 'w', stopToolResponseProperty: 'answer' }`),
      'agents/c.ts': agent(`name: 'c', exposeAsTool: true, sideA: { prompt: 'w' }`),
      'agents/d.ts': agent(`name: 'd', type: 'dual_ai', maxSessionTurns: 2, sideA: { prompt: 'w' }, sideB: { prompt: 'nowhere' }`),
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'a', 'sideB')).toMatchObject({ severity: 'error', message: 'a dual_ai agent needs sideB' });
    expect(one(issues, 'b', 'sideA.stopToolResponseProperty')).toMatchObject({ severity: 'error' });
    expect(one(issues, 'b', 'sideA.stopToolResponseProperty').message).toContain('no stopTool');
    expect(one(issues, 'c', 'toolDescription')).toMatchObject({
      severity: 'error',
      message: 'an agent with exposeAsTool needs a toolDescription',
    });
    expect(one(issues, 'd', 'sideB.prompt')).toMatchObject({ severity: 'error', message: 'unknown prompt "nowhere"' });
    expect([...registry.agents.keys()]).toEqual(['d']);
  });
});

describe('deprecated agent side fields', () => {
  it('[AG-6] warns about each deprecated alias, naming file, agent, field and new name, and stores the new name', async () => {
    const { registry, issues } = await loadRegistry({ agentsDir: WARNINGS_FOLDER });
    const warning = one(issues, 'pair', 'sideA.endSessionTool');
    expect(warning).toMatchObject({
      severity: 'warning',
      message: 'endSessionTool is deprecated: rename it to sessionStop (read as sideA.sessionStop)',
    });
    expect(warning.file).toMatch(/agents\/pair\.ts$/);
    expect(one(issues, 'pair', 'sideB.failSessionTool').message).toContain('rename it to sessionFail');
    expect(one(issues, 'pair', 'sideB.statusTool').message).toContain('rename it to sessionStatus');
    expect(one(issues, 'legacy', 'sideA.endConversationTool').message).toContain('rename it to sessionStop');

    const pair = registry.agents.get('pair')!.definition;
    expect(pair.sideA).toEqual({ prompt: 'worker', sessionStop: 'finish' });
    expect(pair.sideB).toEqual({ prompt: 'worker', label: 'Reviewer', sessionFail: 'give_up', sessionStatus: 'report', stopTol: 'done' });
    expect(registry.agents.get('legacy')!.definition.sideA).toEqual({ prompt: 'helper', sessionStop: 'bye' });
  });

  it('[AG-6] leaves the definition the file exported unchanged', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/w.ts': prompt('w'),
      'agents/a.ts': `import { defineAgent } from 'agentport';\nexport const side = { prompt: 'w', endSessionTool: 'done' };\nexport default defineAgent({ name: 'a', sideA: side } as never);\n`,
    });
    const { registry } = await loadRegistry({ agentsDir: dir });
    const stored = registry.agents.get('a')!.definition;
    expect(stored.sideA).toEqual({ prompt: 'w', sessionStop: 'done' });
    expect(stored.sideA).not.toHaveProperty('endSessionTool');
  });

  it('[AG-6] rejects an alias given together with its new name, or two aliases of one name', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/w.ts': prompt('w'),
      'agents/a.ts': agent(`name: 'a', sideA: { prompt: 'w', sessionStop: 'done', endSessionTool: 'finish' }`),
      'agents/b.ts': agent(`name: 'b', sideA: { prompt: 'w', endSessionTool: 'finish', endConversationTool: 'bye' }`),
      'agents/c.ts': agent(`name: 'c', sideA: { prompt: 'w', sessionFail: { name: 'fail' }, failSessionTool: 'give_up' }`),
    });
    const { registry, issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'a', 'sideA.endSessionTool')).toMatchObject({
      severity: 'error',
      message: 'endSessionTool is a deprecated alias of sessionStop, which is also given: keep only sessionStop',
    });
    expect(one(issues, 'b', 'sideA.endConversationTool')).toMatchObject({ severity: 'error' });
    expect(one(issues, 'b', 'sideA.endConversationTool').message).toContain('endSessionTool also sets');
    expect(one(issues, 'c', 'sideA.failSessionTool')).toMatchObject({ severity: 'error' });
    expect(registry.agents.size).toBe(0);
  });

  it('accepts the new session tool bindings in both forms', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/w.ts': prompt('w'),
      'agents/a.ts': agent(
        `name: 'a', type: 'dual_ai', maxSessionTurns: 6, description: 'Pair.', tags: ['x'], tenvs: { A: 'b' }, packageName: 'p', version: '1.0.0', author: 'me', license: 'MIT', ` +
          `sideA: { prompt: 'w', label: 'A', stopOnResponse: false, stopTool: 'hand_over', stopToolResponseProperty: 'note', maxSteps: 3, sessionStop: 'done', sessionFail: { name: 'fail', messageProperty: 'why' }, sessionStatus: { name: 'status', attachmentsProperty: 'files' } }, ` +
          `sideB: { prompt: 'w' }`,
      ),
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(issues).toEqual([]);
  });
});

describe('hooks', () => {
  it('[PR-14] lists every hook point of HookSignatures', () => {
    const all: Record<HookName, true> = {
      filter_messages: true,
      prefilter_llm_history: true,
      after_system_message: true,
      before_create_message: true,
      after_create_message: true,
      before_update_message: true,
      after_update_message: true,
      before_store_tool_result: true,
      after_tool_call_success: true,
      after_tool_call_failure: true,
      after_thread_created: true,
      after_subagent_created: true,
    };
    expect([...HOOK_NAMES].sort()).toEqual(Object.keys(all).sort());
    expect(HOOK_NAMES).toHaveLength(12);
  });

  it('[PR-14] loads a hook for each of the twelve hook names, referenced by a prompt and an agent', async () => {
    const files: Record<string, string> = { 'models/m.ts': MODEL };
    const ids = HOOK_NAMES.map((hook) => `on_${hook}`);
    HOOK_NAMES.forEach((hook, i) => {
      files[`hooks/${ids[i]}.ts`] =
        `import { defineHook } from 'agentport';\nexport default defineHook({ id: '${ids[i]}', hook: '${hook}', execute: async () => undefined });\n`;
    });
    files['prompts/p.ts'] = prompt('p', `hooks: ${JSON.stringify(ids)}`);
    files['agents/a.ts'] = agent(`name: 'a', sideA: { prompt: 'p' }, hooks: ${JSON.stringify(ids)}`);
    const { registry, issues } = await loadRegistry({ agentsDir: agentsFolder(files) });
    expect(issues).toEqual([]);
    expect([...registry.hooks.values()].map((h) => h.definition.hook).sort()).toEqual([...HOOK_NAMES].sort());
  });

  it('[PR-14] rejects unknown hook ids on an agent', async () => {
    const dir = agentsFolder({
      'models/m.ts': MODEL,
      'prompts/p.ts': prompt('p'),
      'agents/a.ts': agent(`name: 'a', sideA: { prompt: 'p' }, hooks: ['nope']`),
    });
    const { issues } = await loadRegistry({ agentsDir: dir });
    expect(one(issues, 'a', 'hooks[0]')).toMatchObject({ severity: 'error', message: 'unknown hook id "nope"' });
  });
});

describe('validateDefinition', () => {
  it('[AG-6] reports a definition that is not an object with what it is', () => {
    expect(validateDefinition('agent', 'pair', 'agents/a.ts', undefined)).toEqual({
      ok: false,
      issues: [{ severity: 'error', file: 'agents/a.ts', message: 'expected an agent definition object, got string "pair"' }],
    });
  });

  it('[AG-6] is ok with warnings only', () => {
    const outcome = validateDefinition('agent', { name: 'a', sideA: { prompt: 'p', colour: 1 } }, 'f.ts', 'a');
    expect(outcome.ok).toBe(true);
    expect(outcome.issues).toEqual([expect.objectContaining({ severity: 'warning', field: 'sideA.colour' })]);
    expect(definitionSchemas().agent.safeParse({ name: 'a', sideA: { prompt: 'p' } }).success).toBe(true);
  });
});

describe('schemas JSON cannot fill', () => {
  it('[PR-9] [TL-2] refuses a field no caller or model could give a value, naming it; a union with a JSON option is fine', () => {
    const prompt = {
      name: 'p',
      toolDescription: 'd',
      prompt: 'x',
      model: 'm',
      requiredSchema: z.object({
        when: z.date(),
        nested: z.object({ ids: z.array(z.bigint()).optional() }),
        either: z.union([z.string(), z.date()]),
        tags: z.set(z.string()).default(new Set()),
        parsed: z.string().transform((s) => new Date(s)),
        big: z.coerce.bigint(),
      }),
    };
    const outcome = validateDefinition('prompt', prompt, 'agents/p.ts', 'p');
    expect(outcome.ok).toBe(false);
    expect(outcome.issues.map((i) => [i.field, i.message.split(',')[0]])).toEqual([
      ['requiredSchema', 'requiredSchema field when is z.date()'],
      ['requiredSchema', 'requiredSchema field nested.ids[] is z.bigint()'],
      ['requiredSchema', 'requiredSchema field tags is z.set()'],
      ['requiredSchema', 'requiredSchema field big is z.bigint()'],
    ]);
    expect(outcome.issues[0]!.message).toContain('which JSON cannot carry');
    const tool = { description: 'd', args: z.object({ at: z.map(z.string(), z.number()) }), execute: async () => ({ status: 'success' }) };
    expect(validateDefinition('tool', tool, 'agents/t.ts', 't').issues.map((i) => i.message.split(',')[0])).toEqual([
      'args field at is z.map()',
    ]);
    const fine = {
      ...prompt,
      requiredSchema: z.object({ when: z.iso.datetime(), n: z.number().int(), any: z.unknown(), at: z.coerce.date() }),
    };
    expect(validateDefinition('prompt', fine, 'agents/p.ts', 'p').ok).toBe(true);
  });
});
