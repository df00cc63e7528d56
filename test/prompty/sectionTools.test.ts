/**
 * Body `tools:` sections checked when the agents folder loads: names that exist nowhere are load
 * errors with the file and line (not a failure of every call), `{id, type}` entries define tools
 * the registry holds, and what only a call can know (names from template values) is left to the
 * call. Each case is a real agents folder (the e2e folder's model and tools, plus the case's files).
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/load.js';
import { FIXTURES } from '../support/paths.js';

const E2E = path.join(FIXTURES, 'prompty', 'e2e');
let agents: string;

beforeEach(async () => {
  agents = await mkdtemp(path.join(tmpdir(), 'agentport-section-tools-'));
  await cp(path.join(E2E, 'models'), path.join(agents, 'models'), { recursive: true });
  await cp(path.join(E2E, 'tools'), path.join(agents, 'tools'), { recursive: true });
});
afterEach(async () => {
  await rm(agents, { recursive: true, force: true });
});

async function prompty(name: string, body: string, frontmatter = ''): Promise<void> {
  await writeFile(path.join(agents, `${name}.prompty`), `---\ndescription: d\nmodel: test\n${frontmatter}---\n${body}`);
}

const errors = (issues: Awaited<ReturnType<typeof loadRegistry>>['issues']) => issues.filter((i) => i.severity === 'error');

describe('body tools sections at load', () => {
  it('[PY-3] an unknown tool name is a load error with the file, line and entry, and a suggestion', async () => {
    await prompty('a', 'tools:\n  - dataverse\n  - bingg\n\nuser:\nHi\n');
    const { issues } = await loadRegistry({ agentsDir: agents });
    expect(errors(issues)).toEqual([
      {
        severity: 'error',
        file: expect.stringMatching(/a\.prompty:7$/) as unknown,
        definition: 'a',
        field: 'tools[1]',
        message: 'unknown tool "bingg" (did you mean "bing"?)',
      },
    ]);
  });

  it('[PY-3] {id, type} entries define tools the registry holds, described by the entry or their type', async () => {
    await prompty('a', 'tools:\n  - id: crm\n    type: dataverse\n    description: The CRM.\n  - id: web\n    type: bing\n\nuser:\nHi\n');
    await prompty('b', 'tools:\n  - id: web\n    type: bing\n  - crm\n\nuser:\nHi\n');
    const { registry, issues } = await loadRegistry({ agentsDir: agents });
    expect(errors(issues)).toEqual([]);
    expect(registry.tools.get('crm')?.definition.description).toBe('The CRM.');
    expect(registry.tools.get('web')?.definition.description).toBe('Search the web.');
  });

  it('[PY-3] one id defined with two types, or a type that is a prompt, is a load error', async () => {
    await prompty('a', 'tools:\n  - id: lookup\n    type: dataverse\n\nuser:\nHi\n');
    await prompty('b', 'tools:\n  - id: lookup\n    type: bing\n  - id: ask\n    type: a\n\nuser:\nHi\n');
    const { issues } = await loadRegistry({ agentsDir: agents });
    expect(errors(issues).map((i) => [i.file.replace(/^.*\//, ''), i.field, i.message])).toEqual([
      [
        'b.prompty:6',
        'tools[0]',
        expect.stringMatching(
          /^tool "lookup" is also defined with type "dataverse" in .*a\.prompty:6; give one of them another id$/,
        ) as unknown,
      ],
      ['b.prompty:8', 'tools[1]', 'type "a" is a prompt: list it by name ("- a") to call it as a tool'],
    ]);
  });

  it('[PY-3] names that come from template values are left to the call; loops and conditions do not hide the rest', async () => {
    await prompty(
      'a',
      'tools:\n{% for t in extra %}\n  - {{ t }}\n{% endfor %}\n{% if web %}\n  - id: web\n    type: bing\n{% endif %}\n  - nope\n\nuser:\nHi\n',
      'template: jinja2\ninputs:\n  extra: {type: array, default: []}\n  web: {type: boolean, default: true}\n',
    );
    const { registry, issues } = await loadRegistry({ agentsDir: agents });
    expect(errors(issues).map((i) => [i.file.replace(/^.*\//, ''), i.message])).toEqual([['a.prompty:17', 'unknown tool "nope"']]);
    expect(registry.tools.has('web')).toBe(true);
  });

  it('[PY-3] mustache sections around entries do not hide them either', async () => {
    await prompty(
      'm',
      'tools:\n{{#web}}\n  - id: web\n    type: bing\n{{/web}}\n  - nope\n\nuser:\nHi\n',
      'inputs:\n  web: {type: boolean, default: true}\n',
    );
    const { registry, issues } = await loadRegistry({ agentsDir: agents });
    expect(errors(issues).map((i) => [i.file.replace(/^.*\//, ''), i.message])).toEqual([['m.prompty:12', 'unknown tool "nope"']]);
    expect(registry.tools.has('web')).toBe(true);
  });
});
