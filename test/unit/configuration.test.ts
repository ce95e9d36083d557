import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configurationVariables,
  dataDirFromEnv,
  limitFromEnv,
  logSettingsFromEnv,
  maxConcurrencyFromEnv,
  resolveConnection,
  taskQueueFromEnv,
  workerRoleFromEnv,
} from '../../src/config/environment.js';

const catalogue = new Set(configurationVariables.flatMap((variable) => [variable.name, ...(variable.aliases ?? [])]));

/** The variable names in the first column of docs/CONFIGURATION.md's table of environment variables. */
async function readmeTableVariables(): Promise<Set<string>> {
  const doc = await readFile('docs/CONFIGURATION.md', 'utf8');
  const section = doc.slice(
    doc.indexOf('\n## Environment variables\n'),
    doc.indexOf('\n## ', doc.indexOf('\n## Environment variables\n') + 1),
  );
  const names = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const firstColumn = row.split(' | ')[0] ?? '';
    for (const [, name = ''] of firstColumn.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name);
  }
  return names;
}

/** Every .ts file under src/. */
async function sourceFiles(dir = 'src'): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory()
        ? sourceFiles(path.join(dir, entry.name))
        : Promise.resolve(entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : []),
    ),
  );
  return nested.flat();
}

describe('the configuration module and the table of docs/CONFIGURATION.md', () => {
  it('lists the same variables: every variable of the module is in the table, and every row is a variable of the module', async () => {
    const table = await readmeTableVariables();
    expect([...table].sort()).toEqual([...catalogue].sort());
  });

  it('catalogues every Switchyard variable the module reads', async () => {
    const module = await readFile('src/config/environment.ts', 'utf8');
    const read = new Set(
      [...module.matchAll(/'((?:SWITCHYARD|TEMPORAL|BASH|CLAUDE_CODE|ZCODE)_[A-Z0-9_]+)'/g)].map(
        ([, name = '']) => name,
      ),
    );
    expect([...read].sort()).toEqual([...catalogue].sort());
  });

  it('is the only source file that touches process.env', async () => {
    const touching: string[] = [];
    for (const file of await sourceFiles())
      if ((await readFile(file, 'utf8')).includes('process.env')) touching.push(file);
    expect(touching).toEqual([path.join('src', 'config', 'environment.ts')]);
  });
});

describe('resolveConnection: the client, the worker and the CLI resolve address, namespace and task queue alike', () => {
  it('takes each option given, else its variable, else the default', () => {
    const env = {
      TEMPORAL_ADDRESS: 'cluster:7233',
      TEMPORAL_NAMESPACE: 'agents',
      SWITCHYARD_TASK_QUEUE: 'workspace-a',
    };
    expect(resolveConnection({}, env)).toEqual({
      address: 'cluster:7233',
      namespace: 'agents',
      taskQueue: 'workspace-a',
      addressSource: 'TEMPORAL_ADDRESS',
    });
    expect(resolveConnection({ address: 'other:1', namespace: 'ns', taskQueue: 'q' }, env)).toMatchObject({
      address: 'other:1',
      namespace: 'ns',
      taskQueue: 'q',
    });
    expect(resolveConnection({}, {})).toEqual({
      address: 'localhost:7233',
      namespace: 'default',
      taskQueue: 'switchyard',
      addressSource: 'the default; TEMPORAL_ADDRESS is not set',
    });
  });

  it('treats an empty value as unset, for every variable', () => {
    expect(resolveConnection({}, { TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '', SWITCHYARD_TASK_QUEUE: '' })).toEqual(
      resolveConnection({}, {}),
    );
    expect(taskQueueFromEnv({ SWITCHYARD_TASK_QUEUE: '' })).toBe('switchyard');
    expect(workerRoleFromEnv({ SWITCHYARD_WORKER_ROLE: '' })).toBe('all');
    expect(
      maxConcurrencyFromEnv({ SWITCHYARD_MAX_TOOL_CONCURRENCY: '', CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '4' }),
    ).toBe(4);
    expect(limitFromEnv('todoMaxItems', { SWITCHYARD_TODO_MAX_ITEMS: '' })).toBe(limitFromEnv('todoMaxItems', {}));
    expect(logSettingsFromEnv({ SWITCHYARD_LOG_LEVEL: '', SWITCHYARD_LOG_FORMAT: '' }, false)).toEqual({
      level: 'info',
      format: 'json',
    });
    expect(dataDirFromEnv({ SWITCHYARD_DATA_DIR: '', XDG_DATA_HOME: '/xdg' })).toBe(path.join('/xdg', 'switchyard'));
  });

  it('refuses a bad value with the variable named', () => {
    expect(() => limitFromEnv('todoMaxItems', { SWITCHYARD_TODO_MAX_ITEMS: 'many' })).toThrow(
      'SWITCHYARD_TODO_MAX_ITEMS must be a positive integer, got "many"',
    );
    expect(() => logSettingsFromEnv({ SWITCHYARD_LOG_LEVEL: 'loud' }, false)).toThrow(
      'SWITCHYARD_LOG_LEVEL must be one of',
    );
  });
});
