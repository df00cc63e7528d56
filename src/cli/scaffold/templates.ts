/**
 * The files `agentport init` writes: an agents folder with a model, an
 * exposed prompt that uses a tool, the tool, a `.prompty` file, and the
 * package.json and tsconfig.json that let editors and `tsc --noEmit`
 * type-check it (`agentport doctor --types`).
 */

/** Versions the scaffolded package.json asks for besides agentport-mcp itself. */
const SCAFFOLD_VERSIONS = {
  zod: '^4.2.0',
  typescript: '^5.9.0',
  '@types/node': '^20.19.0',
} as const;

export interface ScaffoldOptions {
  /** The package name written to package.json. */
  packageName: string;
  /** The dependency spec for agentport-mcp: a version range, or `file:` a local checkout. */
  agentportSpec: string;
}

/** Relative path -> content, in the order they are listed to the user. */
export function scaffoldFiles(options: ScaffoldOptions): Array<[string, string]> {
  return [
    ['models/main.ts', MODEL],
    ['prompts/assistant.ts', PROMPT],
    ['tools/word_count.ts', TOOL],
    ['prompts/explain.prompty', PROMPTY],
    ['package.json', packageJson(options)],
    ['tsconfig.json', TSCONFIG],
    ['.gitignore', 'node_modules/\n'],
  ];
}

const MODEL = `import { defineModel } from 'agentport-mcp';

/**
 * The model the prompts use, by name. The built-in \`openai\` provider speaks the
 * OpenAI Chat Completions API: set OPENAI_API_KEY, or point OPENAI_BASE_URL (or
 * \`baseURL\` here) at any OpenAI-compatible server (Ollama, LM Studio, vLLM,
 * OpenRouter). \`apiKeyEnv\` names another variable for the key.
 */
export default defineModel({
  name: 'main',
  provider: 'openai',
  model: 'gpt-4.1-mini',
});
`;

const PROMPT = `import { definePrompt } from 'agentport-mcp';

/**
 * An MCP tool named "assistant" (exposeAsTool). Without a requiredSchema it takes
 * { message: string }; give it one (a zod object, with .describe() texts) for
 * other arguments.
 */
export default definePrompt({
  name: 'assistant',
  title: 'Assistant',
  toolDescription: 'Answer a question in a few sentences. Counts words exactly when asked about the length of a text.',
  model: 'main',
  exposeAsTool: true,
  prompt: 'You are a concise, helpful assistant. When asked how long a text is, call word_count instead of guessing.',
  tools: ['word_count'],
});
`;

const TOOL = `import { defineTool } from 'agentport-mcp';
import { z } from 'zod';

/** A function tool; its name is the file name: "word_count". */
export default defineTool({
  description: 'Count the words and characters of a text.',
  args: z.object({
    text: z.string().describe('The text to measure'),
  }),
  // execute(state, args): state is the thread (messages, variables, files, ...),
  // args the arguments the model sent, already validated against \`args\`.
  execute: async (_state, args) => {
    const words = args.text.trim().split(/\\s+/).filter(Boolean).length;
    // The model reads \`result\` (a string). On failure: { status: 'error', error: 'what went wrong' }.
    return { status: 'success', result: JSON.stringify({ words, characters: args.text.length }) };
  },
});
`;

const PROMPTY = `---
name: explain
description: Explain a term in plain words for a given audience.
model: main
exposeAsTool: true
inputs:
  term:
    type: string
    description: The term to explain
  audience:
    type: string
    default: a curious beginner
    description: Who the explanation is for
sample:
  term: MCP
---
system:
You explain technical terms in plain words, in three sentences at most, for {{audience}}.

user:
{{term}}
`;

function packageJson(options: ScaffoldOptions): string {
  return `${JSON.stringify(
    {
      name: options.packageName,
      private: true,
      type: 'module',
      scripts: {
        check: 'agentport doctor --types --dir .',
        // For a person at a terminal; a host starts agentport itself (npm's banner would reach stdout).
        start: 'agentport serve --dir .',
        serve: 'agentport serve --dir .',
      },
      dependencies: {
        'agentport-mcp': options.agentportSpec,
        zod: SCAFFOLD_VERSIONS.zod,
      },
      devDependencies: {
        '@types/node': SCAFFOLD_VERSIONS['@types/node'],
        typescript: SCAFFOLD_VERSIONS.typescript,
      },
    },
    null,
    2,
  )}\n`;
}

// Bundler resolution: definition files are loaded by agentport without a build
// step, so imports need no file extensions; noEmit: tsc only checks.
const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'ESNext',
      moduleResolution: 'Bundler',
      lib: ['ES2023'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      isolatedModules: true,
      esModuleInterop: true,
      resolveJsonModule: true,
    },
    include: ['**/*.ts', '**/*.mts'],
    exclude: ['node_modules'],
  },
  null,
  2,
)}\n`;
