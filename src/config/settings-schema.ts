// The schema of every environment variable Switchyard reads (docs/CONFIGURATION.md lists them): what a value must
// look like, checked once, when a process starts (src/config/settings.ts). A value that does not fit stops startup
// with the variable named; a secret's value is never repeated in the message. An empty value means unset.
import { accessSync, constants, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { sandboxModes } from '../contracts/session.js';

/** The variables whose values are secrets: a message about them never repeats the value. */
export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  'TEMPORAL_API_KEY',
  'SWITCHYARD_CONSOLE_TOKEN',
  'SWITCHYARD_MCP_TOKEN',
]);

const SWITCH_ON = ['1', 'true', 'on', 'yes'];
const SWITCH_OFF = ['0', 'false', 'off', 'no'];

/** A value with neither whitespace nor control characters: a name, a token, a key. */
const word = z.string().regex(/^[^\s\p{Cc}]+$/u, 'must not contain spaces or control characters');

/** A line of text without control characters that is not only spaces. */
const line = z
  .string()
  .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
  .refine((value) => value.trim() !== '', 'must not be blank');

/** A positive whole number (digits only, as the value is written). */
const positiveInteger = z
  .string()
  .refine((value) => /^\d+$/.test(value.trim()) && Number.isSafeInteger(Number(value)) && Number(value) > 0, {
    message: 'must be a positive integer',
  })
  .transform(Number);

const nonNegativeInteger = z
  .string()
  .refine((value) => /^\d+$/.test(value.trim()) && Number.isSafeInteger(Number(value)), {
    message: 'must be a non-negative integer (0: none)',
  })
  .transform(Number);

const positiveMilliseconds = z
  .string()
  .refine((value) => Number.isFinite(Number(value)) && Number(value) > 0 && value.trim() !== '', {
    message: 'must be a positive number of milliseconds',
  })
  .transform(Number);

/** `1`, `true`, `on`, `yes` or `0`, `false`, `off`, `no` (any case). */
const onOff = z
  .string()
  .transform((value) => value.trim().toLowerCase())
  .refine((value) => SWITCH_ON.includes(value) || SWITCH_OFF.includes(value), {
    message: `must be one of ${[...SWITCH_ON, ...SWITCH_OFF].join(', ')}`,
  })
  .transform((value) => SWITCH_ON.includes(value));

const expandHome = (value: string): string => value.replace(/^~(?=$|\/)/, os.homedir());

/** A file the process can read, named by path. */
const readableFile = line.superRefine((value, context) => {
  try {
    accessSync(value, constants.R_OK);
    if (!statSync(value).isFile())
      context.addIssue({ code: 'custom', message: `must name a readable file: ${path.resolve(value)} is not a file` });
  } catch (error) {
    context.addIssue({
      code: 'custom',
      message: `must name a readable file: ${path.resolve(value)} cannot be read (${(error as Error).message})`,
    });
  }
});

/** A directory, or a path where one can be made: never an existing file. */
const directory = line.superRefine((value, context) => {
  try {
    if (!statSync(value).isDirectory())
      context.addIssue({ code: 'custom', message: `must name a directory: ${path.resolve(value)} is not one` });
  } catch {
    // Not there yet: made when first needed.
  }
});

const absolutePath = line.refine((value) => path.isAbsolute(value), {
  message: 'must be an absolute path (a name or a relative path would be looked up through PATH or the cwd)',
});

/** `host`, `host:port` or `[ipv6]:port`, with a port from 1 to 65535. */
const address = z.string().superRefine((value, context) => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+)(?::(\d+))?$/.exec(value);
  const port = match?.[2] === undefined ? undefined : Number(match[2]);
  if (match === null || (port !== undefined && (port < 1 || port > 65_535)))
    context.addIssue({ code: 'custom', message: 'must be host:port (a port from 1 to 65535)' });
});

/** A `:`-separated list of absolute folders (`~/` is the home directory). */
const pathList = z
  .string()
  .transform((value) =>
    value
      .split(':')
      .filter((entry) => entry !== '')
      .map(expandHome),
  )
  .superRefine((entries, context) => {
    const relative = entries.find((entry) => !path.isAbsolute(entry));
    if (relative !== undefined)
      context.addIssue({ code: 'custom', message: `must list absolute folders, got "${relative}"` });
  });

/** Comma-separated environment-variable name globs (`*` any run, `?` one character). */
const nameGlobs = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((glob) => glob.trim())
      .filter((glob) => glob !== ''),
  )
  .superRefine((globs, context) => {
    const bad = globs.find((glob) => !/^[A-Za-z0-9_*?]+$/.test(glob));
    if (bad !== undefined)
      context.addIssue({
        code: 'custom',
        message: `must be comma-separated variable-name globs (letters, digits, _, * and ?), got "${bad}"`,
      });
  });

const oneOf = <const T extends readonly [string, ...string[]]>(values: T, lowerCase = false) =>
  z
    .string()
    .transform((value) => (lowerCase ? value.toLowerCase() : value))
    .refine((value) => (values as readonly string[]).includes(value), {
      message: `must be one of ${values.join(', ')}`,
    })
    .transform((value) => value as T[number]);

export const logLevelNames = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const workerRoleNames = ['all', 'workflows', 'tools'] as const;

/**
 * Each variable and what its value must be. The keys are the documented variables, exactly: a test checks this list
 * against docs/CONFIGURATION.md both ways, and feeds each a bad value.
 */
export const variableSchemas = {
  TEMPORAL_ADDRESS: address,
  TEMPORAL_NAMESPACE: word,
  TEMPORAL_API_KEY: word,
  TEMPORAL_TLS_CLIENT_CERT_PATH: readableFile,
  TEMPORAL_TLS_CLIENT_KEY_PATH: readableFile,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: readableFile,
  TEMPORAL_TLS_SERVER_NAME: word,
  TEMPORAL_TLS: onOff,
  TEMPORAL_PROFILE: word,
  TEMPORAL_CONFIG_FILE: readableFile,
  SWITCHYARD_TASK_QUEUE: word,
  SWITCHYARD_MAX_TOOL_CONCURRENCY: positiveInteger,
  CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY: positiveInteger,
  ZCODE_MAX_TOOL_CONCURRENCY: positiveInteger,
  SWITCHYARD_LOG_LEVEL: oneOf(logLevelNames, true),
  SWITCHYARD_LOG_FORMAT: oneOf(['json', 'pretty']),
  TEMPORAL_CLI_PATH: line,
  SWITCHYARD_DATA_DIR: directory,
  BASH_DEFAULT_TIMEOUT_MS: positiveMilliseconds,
  BASH_MAX_TIMEOUT_MS: positiveMilliseconds,
  SWITCHYARD_OTEL_CONSOLE: onOff,
  SWITCHYARD_CACHE_DIR: directory,
  SWITCHYARD_TRUSTED_WORKSPACES: pathList,
  SWITCHYARD_ENV_EXCLUDE: nameGlobs,
  SWITCHYARD_ENV_INCLUDE: nameGlobs,
  SWITCHYARD_BASH_MAX_SPOOL_BYTES: positiveInteger,
  SWITCHYARD_READ_MAX_FILE_BYTES: positiveInteger,
  SWITCHYARD_IMAGE_MAX_BYTES: positiveInteger,
  SWITCHYARD_GREP_MAX_LINE_CHARS: positiveInteger,
  SWITCHYARD_GREP_LINE_WORK: positiveInteger,
  SWITCHYARD_GREP_MAX_PATTERN_CHARS: positiveInteger,
  SWITCHYARD_TODO_MAX_ITEMS: positiveInteger,
  SWITCHYARD_TODO_MAX_CHARS: positiveInteger,
  SWITCHYARD_LOCAL_READ_ONLY_CALLS: onOff,
  SWITCHYARD_REQUIRE_SEARCH_ATTRIBUTE: onOff,
  SWITCHYARD_WORKFLOW_STACK_TRACES: onOff,
  SWITCHYARD_WORKER_ROLE: oneOf(workerRoleNames),
  SWITCHYARD_USER_SETTINGS_DIR: directory,
  SWITCHYARD_CONSOLE_TOKEN: word,
  SWITCHYARD_CONSOLE_IDENTITY: line,
  SWITCHYARD_MCP_TOKEN: word,
  SWITCHYARD_APPROVERS_FILE: readableFile,
  SWITCHYARD_POLICY_FILE: readableFile,
  SWITCHYARD_CONSOLE_USERS_FILE: readableFile,
  SWITCHYARD_CONSOLE_USER_HEADER: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name (letters, digits and - without spaces)'),
  SWITCHYARD_SANDBOX: oneOf(sandboxModes),
  SWITCHYARD_BWRAP: absolutePath,
  SWITCHYARD_SANDBOX_MEMORY_BYTES: positiveInteger,
  SWITCHYARD_SANDBOX_MAX_PROCESSES: positiveInteger,
  SWITCHYARD_SANDBOX_MAX_FILE_BYTES: positiveInteger,
  SWITCHYARD_SANDBOX_CPU_SECONDS: positiveInteger,
  SWITCHYARD_SESSION_DISK_BYTES: nonNegativeInteger,
} as const;

export type VariableName = keyof typeof variableSchemas;

/** Each variable's value as its schema reads it; absent when unset (or empty). */
export type CheckedVariables = { [Name in VariableName]?: z.output<(typeof variableSchemas)[Name]> };

/** One variable that cannot be used: its name and why, without a secret's value. */
export interface VariableProblem {
  variable: VariableName;
  message: string;
}

/** Every documented variable of `env` (or those `names`) checked against its schema: the values read, or the problems. */
export function checkVariables(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly VariableName[] = Object.keys(variableSchemas) as VariableName[],
): { ok: true; values: CheckedVariables } | { ok: false; problems: VariableProblem[] } {
  const values: Record<string, unknown> = {};
  const problems: VariableProblem[] = [];
  for (const name of names) {
    const schema: z.ZodType = variableSchemas[name];
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      values[name] = parsed.data;
      continue;
    }
    const reasons = parsed.error.issues.map((issue) => issue.message).join('; ');
    const shown = SECRET_VARIABLES.has(name) ? '(value not shown: it is a secret)' : `got "${raw}"`;
    problems.push({ variable: name, message: `${name} ${reasons}, ${shown}` });
  }
  return problems.length === 0 ? { ok: true, values: values as CheckedVariables } : { ok: false, problems };
}
