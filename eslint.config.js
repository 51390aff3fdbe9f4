// ESLint for the TypeScript sources (typescript-eslint's recommended rules and type-aware ones); `npm run lint` runs it.
// Formatting is Prettier's job (.prettierrc.json); the layer rules are dependency-cruiser's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'harness/workloads/python/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    // Type-aware rules: they read the types tsc infers (tsconfig.json), so a cast the types already
    // guarantee, or a promise left floating, fails lint.
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      // node:test's describe() and it() return promises that the runner awaits: see the harness-only block.
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // tsc (noUnusedLocals, noUnusedParameters) reports unused names already.
      '@typescript-eslint/no-unused-vars': 'off',
      // Terminal escaping matches control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    files: ['harness/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
);
