// Lint: typescript-eslint's type-checked recommended rules on the TypeScript
// sources, ESLint's recommended rules on the plain .mjs scripts. Formatting is
// Prettier's job (`npm run format`), so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    // Fixture folders hold deliberately broken definition files that tests load.
    ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', '.agentport/**', '**/.agentport/**'],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { ...globals.node } },
  },
);
