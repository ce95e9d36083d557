/**
 * Which worker environment variables a child process (Bash, command hooks) inherits. The worker's environment
 * holds its secrets (API keys, cloud credentials); a model-chosen command must not be able to print them with
 * `env` or `/proc/self/environ`. Anchored on codex's default shell environment policy, which drops `*KEY*`,
 * `*SECRET*`, `*TOKEN*`; Switchyard adds `*PASSWORD*`, `*PASSWD*`, `*_PWD`, `*CREDENTIAL*`, `*_PAT` (personal access
 * tokens such as `GITHUB_PAT`), and any variable whose value is a URL with a password (`DATABASE_URL=postgres://u:p@h`).
 *
 * Configured per worker through its environment:
 * - `SWITCHYARD_ENV_EXCLUDE`: comma-separated name globs to drop as well (e.g. `INTERNAL_*,DATABASE_URL`).
 * - `SWITCHYARD_ENV_INCLUDE`: comma-separated name globs to pass even though a default pattern matches them
 *   (e.g. `NPM_TOKEN`; `*` turns the default patterns off). An exclude beats an include.
 *
 * Globs match the whole name, case-insensitively; `*` is any run of characters, `?` one character.
 */

import { environmentGlobsFromEnv, processEnvironment } from '../../config/environment.js';
import type { Environment } from '../../config/environment.js';

/** Names that look like secrets (codex's defaults plus passwords, credentials and personal access tokens), dropped unless included. */
export const SECRET_NAME_PATTERNS: readonly string[] = [
  '*KEY*',
  '*SECRET*',
  '*TOKEN*',
  '*PASSWORD*',
  '*PASSWD*',
  '*_PWD',
  '*CREDENTIAL*',
  '*_PAT',
  'PAT',
];

/** A URL with a password in it (`postgres://user:pass@host/db`, `https://x:ghp_…@github.com`): any variable holding one is a secret. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

export interface EnvironmentPolicy {
  /** Globs passed even when a default secret pattern matches them. Default: none. */
  include: readonly string[];
  /** Globs dropped besides the default secret patterns; they beat `include`. Default: none. */
  exclude: readonly string[];
}

function globPattern(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i');
}

/** The policy from `SWITCHYARD_ENV_INCLUDE` and `SWITCHYARD_ENV_EXCLUDE` (comma-separated globs). */
export function environmentPolicyFromEnv(env: Environment = processEnvironment()): EnvironmentPolicy {
  return environmentGlobsFromEnv(env);
}

/**
 * Whether a child process may see the variable `name` under `policy`: not when its name looks like a secret, nor when
 * its `value` (if given) carries a password inside a URL (`DATABASE_URL`, `SENTRY_DSN`, a proxy with credentials).
 */
export function isVariableAllowed(options: { name: string; policy: EnvironmentPolicy; value?: string }): boolean {
  const { name, policy } = options;
  const matches = (globs: readonly string[]): boolean => globs.some((glob) => globPattern(glob).test(name));
  if (matches(policy.exclude)) return false;
  if (matches(policy.include)) return true;
  return !matches(SECRET_NAME_PATTERNS) && !(options.value !== undefined && URL_WITH_PASSWORD.test(options.value));
}

/**
 * The environment a child process starts with: `env` (default the worker's) minus what `policy` (default from
 * the worker's env) drops. Spawn with `extendEnv: false`, or the dropped variables come back.
 */
export function childEnvironment(
  options: { env?: NodeJS.ProcessEnv; policy?: EnvironmentPolicy } = {},
): Record<string, string> {
  const env = options.env ?? processEnvironment();
  const policy = options.policy ?? environmentPolicyFromEnv(env);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isVariableAllowed({ name, policy, value })) kept[name] = value;
  }
  return kept;
}
