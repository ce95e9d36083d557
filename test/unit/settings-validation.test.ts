// Every documented setting is checked when a process starts: the variables table of docs/CONFIGURATION.md and the
// settings schema (src/config/settings-schema.ts) list the same variables, and a bad value of each stops startup with
// the variable named — never a silent default, never a secret repeated.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { configurationVariables } from '../../src/config/environment.js';
import { environmentSettings, settingsFromEnvironment } from '../../src/config/settings.js';
import { SECRET_VARIABLES, variableSchemas } from '../../src/config/settings-schema.js';
import { scratchDir } from '../support/scratch.js';

/** The variable names in the first column of docs/CONFIGURATION.md's variables table. */
async function documentedVariables(): Promise<string[]> {
  const doc = await readFile('docs/CONFIGURATION.md', 'utf8');
  const lines = doc.split('\n');
  const header = lines.findIndex((line) => /^\| *variable *\|/.test(line));
  expect(header, 'docs/CONFIGURATION.md has a table whose first column is "variable"').toBeGreaterThanOrEqual(0);
  const names = new Set<string>();
  for (const row of lines.slice(header + 2)) {
    if (!row.startsWith('|')) break;
    const firstColumn = row.split(' | ')[0] ?? '';
    for (const [, name = ''] of firstColumn.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name);
  }
  return [...names].sort();
}

describe('the settings schema and docs/CONFIGURATION.md', () => {
  it('list the same variables: every documented variable has a schema, every schema a row', async () => {
    expect(await documentedVariables()).toEqual(Object.keys(variableSchemas).sort());
  });

  it("and src/config/environment.ts's catalogue name the same variables", () => {
    const catalogue = configurationVariables.flatMap((variable) => [variable.name, ...(variable.aliases ?? [])]);
    expect(catalogue.sort()).toEqual(Object.keys(variableSchemas).sort());
  });
});

describe('a bad value of every documented setting stops startup, naming the setting', () => {
  let dir: string;
  let aFile: string;
  let missing: string;
  /** A bad value for each variable (with what else it needs), and what the message must also say. */
  let badValues: Record<string, { value: string; also?: Record<string, string> }>;

  beforeAll(async () => {
    dir = await scratchDir('switchyard-bad-settings-');
    aFile = path.join(dir, 'a-file');
    await writeFile(aFile, 'not a directory\n');
    missing = path.join(dir, 'missing');
    badValues = {
      TEMPORAL_ADDRESS: { value: 'localhost:port' },
      TEMPORAL_NAMESPACE: { value: 'my namespace' },
      TEMPORAL_API_KEY: { value: 'secret key\nwith a line break' },
      TEMPORAL_TLS_CLIENT_CERT_PATH: { value: missing },
      TEMPORAL_TLS_CLIENT_KEY_PATH: { value: missing },
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: { value: missing },
      TEMPORAL_TLS_SERVER_NAME: { value: 'two words' },
      TEMPORAL_TLS: { value: 'maybe' },
      TEMPORAL_PROFILE: { value: 'two words' },
      TEMPORAL_CONFIG_FILE: { value: missing },
      SWITCHYARD_TASK_QUEUE: { value: 'a queue' },
      SWITCHYARD_MAX_TOOL_CONCURRENCY: { value: '0' },
      CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: { value: 'many' },
      ZCODE_MAX_TOOL_CONCURRENCY: { value: '-3' },
      SWITCHYARD_LOG_LEVEL: { value: 'loud' },
      SWITCHYARD_LOG_FORMAT: { value: 'xml' },
      TEMPORAL_CLI_PATH: { value: 'bad\u0007path' },
      SWITCHYARD_DATA_DIR: { value: aFile },
      BASH_DEFAULT_TIMEOUT_MS: { value: '-5' },
      BASH_MAX_TIMEOUT_MS: { value: 'forever' },
      SWITCHYARD_OTEL_CONSOLE: { value: 'sometimes' },
      SWITCHYARD_CACHE_DIR: { value: aFile },
      SWITCHYARD_TRUSTED_WORKSPACES: { value: '/ok:relative/folder' },
      SWITCHYARD_ENV_EXCLUDE: { value: 'LC_*,PATH=x' },
      SWITCHYARD_ENV_INCLUDE: { value: 'NODE ENV' },
      SWITCHYARD_BASH_MAX_SPOOL_BYTES: { value: 'lots' },
      SWITCHYARD_READ_MAX_FILE_BYTES: { value: '0' },
      SWITCHYARD_IMAGE_MAX_BYTES: { value: '1.5' },
      SWITCHYARD_GREP_MAX_LINE_CHARS: { value: 'lots' },
      SWITCHYARD_GREP_LINE_WORK: { value: '-1' },
      SWITCHYARD_GREP_MAX_PATTERN_CHARS: { value: 'x' },
      SWITCHYARD_TODO_MAX_ITEMS: { value: 'many' },
      SWITCHYARD_TODO_MAX_CHARS: { value: '0' },
      SWITCHYARD_LOCAL_READ_ONLY_CALLS: { value: 'fasle' },
      SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE: { value: 'nope' },
      SWITCHYARD_WORKFLOW_STACK_TRACES: { value: 'full' },
      SWITCHYARD_WORKER_ROLE: { value: 'boss' },
      SWITCHYARD_USER_SETTINGS_DIR: { value: aFile },
      SWITCHYARD_CONSOLE_TOKEN: { value: 'secret token' },
      SWITCHYARD_CONSOLE_IDENTITY: { value: '   ' },
      SWITCHYARD_MCP_TOKEN: { value: 'secret\ttoken' },
      SWITCHYARD_APPROVERS_FILE: { value: missing },
      SWITCHYARD_POLICY_FILE: { value: missing },
      SWITCHYARD_CONSOLE_USERS_FILE: { value: missing },
      SWITCHYARD_CONSOLE_USER_HEADER: { value: 'X Remote User' },
      SWITCHYARD_SANDBOX: { value: 'yes' },
      SWITCHYARD_BWRAP: { value: 'bwrap' },
      SWITCHYARD_SANDBOX_MEMORY_BYTES: { value: '4G' },
      SWITCHYARD_SANDBOX_MAX_PROCESSES: { value: '0' },
      SWITCHYARD_SANDBOX_MAX_FILE_BYTES: { value: 'big' },
      SWITCHYARD_SANDBOX_CPU_SECONDS: { value: '-60' },
      SWITCHYARD_SESSION_DISK_BYTES: { value: '-1' },
    };
  });

  it('has a bad value for every documented variable', async () => {
    expect(Object.keys(badValues).sort()).toEqual(await documentedVariables());
  });

  it('starts with none of them set, and with each one empty (empty means unset)', async () => {
    const base = { HOME: dir };
    await expect(settingsFromEnvironment(base)).resolves.toMatchObject({ taskQueue: 'switchyard' });
    const empty = Object.fromEntries(Object.keys(variableSchemas).map((name) => [name, '']));
    await expect(settingsFromEnvironment({ ...base, ...empty })).resolves.toMatchObject({ sandboxMode: 'auto' });
  });

  it('refuses each bad value with the variable named, and never repeats a secret', async () => {
    const unnamed: string[] = [];
    for (const [variable, bad] of Object.entries(badValues)) {
      const env = { HOME: dir, ...bad.also, [variable]: bad.value };
      const outcome = await settingsFromEnvironment(env).then(
        () => 'started',
        (error: unknown) => (error as Error).message,
      );
      if (outcome === 'started' || !outcome.includes(variable)) unnamed.push(`${variable}=${bad.value}: ${outcome}`);
      if (SECRET_VARIABLES.has(variable)) expect(outcome).not.toContain(bad.value);
    }
    expect(unnamed, 'settings that started, or stopped without naming the variable').toEqual([]);
  });

  it('names every bad variable at once, so one start shows all that is wrong', () => {
    expect(() => environmentSettings({ SWITCHYARD_SANDBOX: 'yes', SWITCHYARD_TODO_MAX_ITEMS: 'many' })).toThrow(
      /SWITCHYARD_TODO_MAX_ITEMS must be a positive integer, got "many".*SWITCHYARD_SANDBOX must be one of auto, required, off, got "yes"|SWITCHYARD_SANDBOX must be one of auto, required, off, got "yes".*SWITCHYARD_TODO_MAX_ITEMS/,
    );
  });

  it('reads the good values into the typed settings the entry points pass down', () => {
    const settings = environmentSettings({
      HOME: dir,
      SWITCHYARD_TASK_QUEUE: 'agents',
      SWITCHYARD_WORKER_ROLE: 'tools',
      CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: '4',
      SWITCHYARD_LOCAL_READ_ONLY_CALLS: 'off',
      SWITCHYARD_SANDBOX: 'required',
      SWITCHYARD_TODO_MAX_ITEMS: '7',
      SWITCHYARD_ENV_INCLUDE: 'NODE_ENV, MY_*',
      SWITCHYARD_TRUSTED_WORKSPACES: '/srv/a::/srv/b',
      SWITCHYARD_LOG_LEVEL: 'DEBUG',
    });
    expect(settings).toMatchObject({
      taskQueue: 'agents',
      worker: {
        role: 'tools',
        defaultMaxConcurrency: 4,
        localReadOnlyCalls: false,
        trustedWorkspaces: ['/srv/a', '/srv/b'],
      },
      tools: {
        limits: { todoMaxItems: 7 },
        sandbox: { workerMode: 'required' },
        environmentPolicy: { include: ['NODE_ENV', 'MY_*'], exclude: [] },
      },
      logs: { level: 'debug' },
    });
  });
});
