/**
 * Inline `model` objects as Prompty files write them: every way a file can name a provider or a
 * connection kind other than OpenAI is a load error naming the file, line and field, unless a
 * baseURL gives the OpenAI-compatible endpoint; keys are read from the variable `${env:NAME}`
 * names; the registry turns what is left into a model on the built-in provider.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentportError } from '../../src/errors.js';
import { promptyErrorData } from '../../src/prompty/errors.js';
import { loadPromptyFile } from '../../src/prompty/load.js';
import { loadRegistry } from '../../src/registry/load.js';

let agents: string;

beforeEach(async () => {
  agents = await mkdtemp(path.join(tmpdir(), 'agentport-model-'));
  await mkdir(path.join(agents, 'prompts'));
});
afterEach(async () => {
  await rm(agents, { recursive: true, force: true });
});

async function write(name: string, model: string): Promise<string> {
  const file = path.join(agents, 'prompts', `${name}.prompty`);
  await writeFile(file, `---\ndescription: d\nmodel:\n${model}\n---\nuser:\nHi\n`);
  return file;
}

async function loadError(file: string, env: Record<string, string> = {}) {
  const err: unknown = await loadPromptyFile(file, { agentsDir: agents, env }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentportError);
  return { ...promptyErrorData(err)!, message: (err as AgentportError).message };
}

describe('unsupported connections', () => {
  const cases: Array<{ name: string; model: string; line: number; field: string; value: string }> = [
    { name: 'provider', model: '  id: claude-sonnet\n  provider: anthropic', line: 5, field: 'model.provider', value: 'anthropic' },
    {
      name: 'configuration',
      model: '  api: chat\n  configuration:\n    type: azure_openai\n    azure_deployment: gpt-4o',
      line: 6,
      field: 'model.configuration.type',
      value: 'azure_openai',
    },
    {
      name: 'kind',
      model: '  id: gpt-4o\n  connection:\n    kind: foundry\n    endpoint: https://x.services.ai.azure.com',
      line: 6,
      field: 'model.connection.kind',
      value: 'foundry',
    },
    {
      name: 'reference',
      model: '  id: gpt-4o\n  connection:\n    kind: reference\n    name: shared',
      line: 6,
      field: 'model.connection.kind',
      value: 'reference',
    },
    {
      name: 'azure_keys',
      model: '  id: gpt-4o\n  connection:\n    azure_endpoint: https://contoso.openai.azure.com\n    api_version: 2024-10-21',
      line: 6,
      field: 'model.connection.azure_endpoint',
      value: 'azure_openai',
    },
    {
      name: 'mixed',
      model: '  id: gpt-4o\n  provider: openai\n  connection:\n    type: azure',
      line: 7,
      field: 'model.connection.type',
      value: 'azure',
    },
  ];
  for (const c of cases) {
    it(`[PY-12] ${c.name}: is a load error naming the file, the line, the field and the connection`, async () => {
      const file = await write(c.name, c.model);
      const err = await loadError(file);
      expect(err.file).toBe(file);
      expect(err.line).toBe(c.line);
      expect(err.field).toBe(c.field);
      expect(err.message).toContain(`${file}:${c.line}: ${c.field}: "${c.value}" is not a supported connection`);
    });
  }

  it('[PY-12] a baseURL maps any provider to its OpenAI-compatible endpoint', async () => {
    const file = await write(
      'mapped',
      '  id: gpt-4o\n  connection:\n    type: azure_openai\n    baseURL: https://contoso.openai.azure.com/openai/v1/\n    azure_endpoint: https://contoso.openai.azure.com',
    );
    const p = await loadPromptyFile(file, { agentsDir: agents, env: {} });
    expect(p.model).toMatchObject({ id: 'gpt-4o', provider: 'azure_openai', baseURL: 'https://contoso.openai.azure.com/openai/v1/' });
  });

  it('[PY-12] an api other than chat is a load error', async () => {
    const err = await loadError(await write('embedding', '  id: text-embedding-3-small\n  api: embedding'));
    expect(err).toMatchObject({ line: 5, field: 'model.api' });
    expect(err.message).toContain('api "embedding" is not supported');
  });

  it('[PY-12] a key written as ${env:NAME} names the key variable; a literal key is a load error', async () => {
    const named = await write(
      'keyenv',
      '  id: gpt-4o\n  connection:\n    kind: key\n    endpoint: https://llm.example.com/v1\n    key: ${env:MY_LLM_KEY}',
    );
    const p = await loadPromptyFile(named, { agentsDir: agents, env: { MY_LLM_KEY: 'sk-secret' } });
    expect(p.model).toMatchObject({ id: 'gpt-4o', baseURL: 'https://llm.example.com/v1', apiKeyEnv: 'MY_LLM_KEY' });
    expect(JSON.stringify(p.model)).not.toContain('sk-secret');

    const literal = await loadError(
      await write('keyliteral', '  id: gpt-4o\n  configuration:\n    type: openai\n    api_key: sk-in-the-file'),
    );
    expect(literal).toMatchObject({ line: 7, field: 'model.configuration.api_key' });
    expect(literal.message).toContain('write the key as ${env:NAME}');
    expect(literal.message).not.toContain('sk-in-the-file');
  });
});

describe('inline models in the registry', () => {
  it('[PY-12] an unsupported inline connection stops the folder with the file, line and field', async () => {
    await write('azure', '  api: chat\n  configuration:\n    type: azure_openai\n    azure_deployment: gpt-4o');
    const { issues } = await loadRegistry({ agentsDir: agents });
    expect(issues).toEqual([
      expect.objectContaining({
        severity: 'error',
        file: expect.stringMatching(/prompts\/azure\.prompty:6$/) as unknown,
        field: 'model.configuration.type',
        message: expect.stringContaining('"azure_openai" is not a supported connection') as unknown,
      }),
    ]);
  });

  it('[PY-12] becomes an OpenAI-compatible model with its base URL, key variable and options under their Chat Completions names', async () => {
    await write(
      'inline',
      [
        '  id: gpt-4o',
        '  provider: azure',
        '  connection:',
        '    base_url: https://contoso.openai.azure.com/openai/v1/',
        '    api_key_env: AZURE_KEY',
        '  options:',
        '    temperature: 0.3',
        '    maxOutputTokens: 200',
        '    topP: 0.9',
        '    stopSequences: [END]',
        '    additionalProperties: {seed: 7}',
      ].join('\n'),
    );
    const { registry, issues } = await loadRegistry({ agentsDir: agents });
    expect(issues).toEqual([]);
    expect(registry.models.get('inline.model')?.definition).toEqual({
      name: 'inline.model',
      provider: 'openai',
      model: 'gpt-4o',
      baseURL: 'https://contoso.openai.azure.com/openai/v1/',
      apiKeyEnv: 'AZURE_KEY',
      temperature: 0.3,
      maxTokens: 200,
      options: { top_p: 0.9, stop: ['END'], seed: 7 },
    });
  });
});
