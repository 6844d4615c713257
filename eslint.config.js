import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: globals.node } },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'ClassDeclaration[superClass=null]', message: 'Use functions and object literals; only error classes are classes.' }],
    },
  },
  {
    // Routes and the importer talk to storage through its interface only.
    files: ['src/modules/**', 'src/import/**', 'src/cli/**', 'src/http/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['kysely', 'better-sqlite3', 'pg'] }] },
  },
);
