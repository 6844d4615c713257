import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// What the domain, the input layer and the three that read files (import, ingest, feeds) must not import: the
// generator and the webhooks' sender beside them, and every layer above.
const generatorAndAbove = [
  'src/generate',
  'src/webhooks',
  'src/http',
  'src/modules',
  'src/cli',
  'src/app.ts',
  'src/server.ts',
  'src/cluster.ts',
  'src/config.ts',
];
// The generator and the settings file are in that list themselves: each forbids the rest of it.
const besides = (self) => generatorAndAbove.filter((path) => path !== self);

// The layers of docs/ARCHITECTURE.md, lowest first. A file may import from its own layer and the layers below it;
// `forbidden` lists, for each layer, what it must never import (the layers above, and siblings that must stay apart).
const layers = {
  domain: { path: 'src/domain', forbidden: ['src/storage', 'src/input', 'src/import', ...generatorAndAbove] },
  // Generic helpers that are about nothing of the project's (worker threads, per-turn gathering, an LRU map).
  lib: {
    path: 'src/lib',
    forbidden: [
      'src/domain',
      'src/storage',
      'src/input',
      'src/import',
      'src/ingest',
      'src/feeds',
      ...generatorAndAbove,
    ],
  },
  storage: {
    path: 'src/storage',
    forbidden: ['src/input', 'src/import', 'src/ingest', 'src/feeds', ...generatorAndAbove],
  },
  // What import, ingest and feeds share (opening a file, streamed JSON, format detection, record normalisation) is
  // src/input/, beneath all three: none of them imports another, and the shared layer imports the domain alone.
  input: {
    path: 'src/input',
    forbidden: ['src/storage', 'src/import', 'src/ingest', 'src/feeds', ...generatorAndAbove],
  },
  import: { path: 'src/import', forbidden: ['src/ingest', 'src/feeds', ...generatorAndAbove] },
  ingest: { path: 'src/ingest', forbidden: ['src/import', 'src/feeds', ...generatorAndAbove] },
  feeds: { path: 'src/feeds', forbidden: ['src/import', 'src/ingest', ...generatorAndAbove] },
  // Sends the change log's alerts (network I/O over storage's outbox): beside import, ingest and feeds, none of them.
  webhooks: {
    path: 'src/webhooks',
    forbidden: ['src/input', 'src/import', 'src/ingest', 'src/feeds', ...besides('src/webhooks')],
  },
  generate: {
    path: 'src/generate',
    forbidden: ['src/storage', 'src/import', ...besides('src/generate')],
  },
  http: {
    path: 'src/http',
    forbidden: [
      'src/import',
      'src/generate',
      'src/webhooks',
      'src/modules',
      'src/cli',
      'src/app.ts',
      'src/server.ts',
      'src/cluster.ts',
      'src/config.ts',
    ],
  },
  modules: {
    path: 'src/modules',
    forbidden: [
      'src/import',
      'src/generate',
      'src/webhooks',
      'src/cli',
      'src/app.ts',
      'src/server.ts',
      'src/cluster.ts',
      'src/config.ts',
    ],
  },
  app: {
    path: 'src/app.ts',
    forbidden: [
      'src/cli',
      'src/server.ts',
      'src/cluster.ts',
      'src/config.ts',
      'src/import',
      'src/generate',
      'src/webhooks',
    ],
  },
  server: { path: 'src/server.ts', forbidden: ['src/cli', 'src/cluster.ts', 'src/import', 'src/generate'] },
  // Several serving processes on one port: the server's level, above it.
  cluster: { path: 'src/cluster.ts', forbidden: ['src/cli', 'src/import', 'src/generate'] },
  // The typed client ships to programs that run no server: beside its own files it may import only types, of the
  // domain records and query tables and of the response schemas (the rule for src/client/** below).
  client: {
    path: 'src/client',
    forbidden: [
      'src/storage',
      'src/input',
      'src/import',
      'src/ingest',
      'src/feeds',
      'src/generate',
      'src/webhooks',
      'src/http',
      'src/cli',
      'src/app.ts',
      'src/server.ts',
      'src/cluster.ts',
      'src/config.ts',
    ],
  },
  config: {
    path: 'src/config.ts',
    forbidden: ['src/storage', 'src/input', 'src/import', ...besides('src/config.ts')],
  },
};

// The rooms of src/storage/ (docs/ARCHITECTURE.md), lowest first; each may import the rooms before it, and the
// interface file (types.ts) imports nothing of storage. accounts, read and scans are siblings: none imports another.
const roomOrder = [
  'db',
  'tx',
  'read',
  'accounts',
  'scans',
  'changes',
  'webhooks',
  'derive',
  'feeds',
  'remediation',
  'write',
];
/** The rooms after `room`, and the assembly. */
const higher = (room) => [...roomOrder.slice(roomOrder.indexOf(room) + 1), 'index.ts'];
const storageRooms = [
  { room: 'db', forbidden: higher('db') },
  { room: 'tx', forbidden: higher('tx') },
  { room: 'read', forbidden: higher('read') },
  { room: 'accounts', forbidden: ['read', ...higher('accounts')] },
  { room: 'scans', forbidden: ['read', 'accounts', ...higher('scans')] },
  { room: 'changes', forbidden: ['accounts', 'scans', ...higher('changes')] },
  // The outbox reads the change log; no write imports it (the log is the outbox, appended by the writes themselves).
  { room: 'webhooks', forbidden: ['accounts', 'scans', ...higher('webhooks')] },
  { room: 'derive', forbidden: ['scans', 'webhooks', ...higher('derive')] },
  { room: 'feeds', forbidden: ['scans', 'webhooks', ...higher('feeds')] },
  { room: 'remediation', forbidden: ['scans', 'webhooks', 'feeds', ...higher('remediation')] },
  { room: 'write', forbidden: ['webhooks', 'index.ts'] },
  { room: 'types.ts', forbidden: [...roomOrder, 'index.ts'] },
];

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // no-cycle follows imports only into files it can parse.
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ClassDeclaration[superClass=null]',
          message: 'Use functions and object literals; only error classes are classes.',
        },
      ],
      // Layering and cycles (docs/ARCHITECTURE.md): `npm run check` fails on an upward import or an import cycle.
      'import-x/no-restricted-paths': [
        'error',
        {
          // Zones are relative to this file, not to the working directory of whoever runs the lint.
          basePath: import.meta.dirname,
          zones: [
            ...Object.entries(layers).map(([name, { path, forbidden }]) => ({
              target: `./${path}`,
              from: forbidden.map((f) => `./${f}`),
              message: `the ${name} layer must not import this (see docs/ARCHITECTURE.md)`,
            })),
            ...storageRooms.map(({ room, forbidden }) => ({
              target: `./src/storage/${room}`,
              from: forbidden.map((f) => `./src/storage/${f}`),
              message: `the storage room ${room} must not import this (see docs/ARCHITECTURE.md)`,
            })),
            // The web console runs in a browser and talks to the server over HTTP: of the server's code it may use the
            // typed client alone (which itself imports only types from below).
            {
              target: './console',
              from: './src',
              except: ['./client'],
              message: 'the console layer must not import this: of src/, only src/client (see docs/ARCHITECTURE.md)',
            },
            {
              target: './src',
              from: './console',
              message: 'the server never imports the console (see docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Fastify plugins and handlers are async by contract (a throw must become a rejection), with or without an await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read response bodies as parsed JSON (`any`) and assert on them field by field.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // Routes and the importer talk to storage through its interface only, the input layer not at all.
    files: ['src/modules/**', 'src/input/**', 'src/import/**', 'src/cli/**', 'src/http/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['kysely', 'better-sqlite3', 'pg'] }] },
  },
  {
    // The client runs on Node's fetch alone: anything beyond its own folder is imported for its types only.
    files: ['src/client/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./)',
              allowTypeImports: true,
              message: 'the client imports only types from outside src/client (see docs/ARCHITECTURE.md)',
            },
          ],
        },
      ],
    },
  },
  {
    // The console runs in the browser: browser globals, no Node module.
    files: ['console/src/**'],
    languageOptions: { globals: globals.browser },
    rules: { 'no-restricted-imports': ['error', { patterns: ['node:*'] }] },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
