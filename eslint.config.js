// ESLint for the TypeScript sources (with typescript-eslint's recommended rules); `npm run lint` runs it.
// Formatting is Prettier's job (.prettierrc.json); the layer rules are dependency-cruiser's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'harness/workloads/python/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      // tsc (noUnusedLocals, noUnusedParameters) reports unused names already.
      '@typescript-eslint/no-unused-vars': 'off',
      // Terminal escaping matches control characters on purpose.
      'no-control-regex': 'off',
    },
  },
);
