// Lint that guards determinism and async hygiene; run by `npm test` (and so by CI).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeModules = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

/** Modules workflow code may never import: Node built-ins and Node-only packages break the sandbox. */
const workflowForbidden = [
  ...nodeModules.map((name) => ({ name, message: 'Workflow code is sandboxed: no Node modules (determinism).' })),
  ...[
    'execa',
    'pino',
    'pino-pretty',
    '@temporalio/activity',
    '@temporalio/worker',
    '@temporalio/client',
    '@temporalio/testing',
  ].map((name) => ({ name, message: 'Node-only package: not allowed in workflow code.' })),
];

/** Another package's internals (`@temporalio/x/lib/…`) are not its API and move between versions. */
const deepImports = {
  regex: '^(@[^/]+/)?[^./][^/]*/lib/',
  message: "No deep imports into another package's lib/: use its public entry point.",
};

/**
 * The environment module is read only at the edge: the CLI, the settings (src/config) and the worker factory resolve
 * the settings once and pass them down; nothing below them reads the environment on its own.
 */
const environmentModule = {
  group: ['**/config/environment', '**/config/environment.js'],
  message:
    'Only the edge (src/cli, src/config, src/worker/create-worker.ts) reads the environment: take the settings passed down (src/config/settings.ts).',
};

/** Files that may import the environment module. */
const edgeFiles = ['src/cli/**', 'src/config/**', 'src/worker/create-worker.ts'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'No default exports.' }],
      'no-restricted-imports': ['error', { patterns: [deepImports] }],
    },
  },
  { files: ['vitest.config.ts', 'vitest.long.config.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['src/**/*.ts'],
    ignores: edgeFiles,
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImports, environmentModule] }] },
  },
  {
    // Workflow code and the contracts it imports must stay deterministic and sandbox-safe.
    files: ['src/workflows/**/*.ts', 'src/contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: workflowForbidden,
          patterns: [
            deepImports,
            environmentModule,
            {
              group: ['**/activities/*', '**/hooks/*'],
              message:
                'What workflows share with activities and hooks (the Activities interface, their inputs and outputs) is in src/contracts.',
            },
            {
              group: ['**/worker/*', '**/server/*', '**/tools/*', '**/client/*', '**/cli/*'],
              allowTypeImports: true,
              message: 'Workflow code may import only types from Node-side folders.',
            },
          ],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process in workflow code.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Not available in workflows.' },
      ],
    },
  },
  {
    // Hooks (src/hooks/) serve the activities: they take nothing from the activities or the workflows above them.
    files: ['src/hooks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            deepImports,
            environmentModule,
            {
              group: ['**/activities/*', '**/workflows/*'],
              message:
                'Hooks may not import from activities or workflows: what both need belongs in src/hooks or src/contracts.',
            },
          ],
        },
      ],
    },
  },
);
