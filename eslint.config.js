// Lint: typescript-eslint's type-checked recommended rules on the TypeScript
// sources, ESLint's recommended rules on the plain .mjs scripts. Formatting is
// Prettier's job (`npm run format`), so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    // Fixture folders hold deliberately broken definition files that tests load.
    ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', '.agentport/**', '**/.agentport/**', '.bench-tmp/**'],
  },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A named interface that extends one other is a public API name, not an empty type.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      // Promise-returning contracts (stores, tools' execute) are implemented with
      // `async` even without an await, so that a throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // `_name` marks what is left out on purpose (rest-omission, unused parameters).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { ...globals.node } },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }] },
  },
  {
    // Tests read parsed JSON and use vitest's asymmetric matchers (expect.any and
    // friends), both typed `any`; the assertions themselves check the shapes.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // Stored message content is a string or content parts; tests compare its printed form.
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // Config files that no tsconfig includes.
    files: ['*.config.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
