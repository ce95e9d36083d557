/**
 * Which worker environment variables a child process (Bash, background tasks, command hooks) inherits: an allow list.
 * The worker's environment holds its secrets (API keys, cloud credentials, registry auth such as `NPM_CONFIG__AUTH`,
 * `DOCKER_AUTH_CONFIG`, telemetry headers such as `OTEL_EXPORTER_OTLP_HEADERS`); a model-chosen command must not be
 * able to print them with `env` or `/proc/self/environ`. A deny list of secret-looking names always misses one, so a
 * child gets only what a shell needs (`DEFAULT_ALLOWED_NAMES`: PATH, HOME, LANG, LC_*, TERM, TZ, USER, SHELL, …) and
 * what the operator names, and never a value that looks like a key or a token (`secretValueKind`: a PEM block, a
 * `Bearer`/`Basic` credential, a JWT, a token with a well-known prefix such as `ghp_`, `sk-`, `xox…-`, `AKIA`, or a URL
 * with a password), whatever its name.
 *
 * Configured per worker through its environment (resolved with the worker's settings, handed down by `toolSettings()`):
 * - `SWITCHYARD_ENV_INCLUDE`: comma-separated name globs passed besides the defaults (e.g. `NODE_ENV,JAVA_HOME,MY_*`;
 *   `*` passes every name). A name that looks like a secret (`SECRET_NAME_PATTERNS`) passes only when an include
 *   names it; a value that looks like one never passes.
 * - `SWITCHYARD_ENV_EXCLUDE`: comma-separated name globs to drop even when allowed or included (e.g. `LC_*`).
 *   An exclude beats an include.
 *
 * Globs match the whole name, case-insensitively; `*` is any run of characters, `?` one character.
 */

import { toolSettings } from '../tool-settings.js';
import type { ToolEnvironment } from '../tool-settings.js';

/** What a shell and the usual tools need to run: passed unless excluded (and unless the value looks like a secret). */
export const DEFAULT_ALLOWED_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'HOSTNAME',
  'EDITOR',
  'VISUAL',
  'PAGER',
];

/**
 * Names that look like secrets (codex's `*KEY*`, `*SECRET*`, `*TOKEN*`, and passwords, passphrases, credentials,
 * personal access tokens, JWTs, auth settings, headers, cookies, DSNs): an include glob with a wildcard (`*`, `NPM_*`)
 * does not pass them; an include that writes the name out (`NPM_TOKEN`) does.
 */
export const SECRET_NAME_PATTERNS: readonly string[] = [
  '*KEY*',
  '*SECRET*',
  '*TOKEN*',
  '*PASSWORD*',
  '*PASSWD*',
  '*PASSPHRASE*',
  '*_PWD',
  '*CREDENTIAL*',
  '*_PAT',
  'PAT',
  '*JWT*',
  'AUTH',
  'AUTH_*',
  '*_AUTH',
  '*_AUTH_*',
  '*AUTHORIZATION*',
  '*HEADERS*',
  '*COOKIE*',
  '*DSN*',
];

/** A URL with a password in it (`postgres://user:pass@host/db`, `https://x:ghp_…@github.com`). */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;

/** Values that are keys or tokens, by their shape, whatever the variable is called. */
const SECRET_VALUES: ReadonlyArray<{ kind: string; pattern: RegExp }> = [
  { kind: 'a PEM key or certificate block', pattern: /-----BEGIN [A-Z0-9 ]+-----/ },
  { kind: 'a bearer or basic credential', pattern: /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/ },
  { kind: 'a JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/ },
  {
    kind: 'a token with a well-known prefix',
    pattern:
      /(?:^|[\s"'=:,;@])(?:gh[pousr]_|github_pat_|glpat-|sk-|sk_live_|sk_test_|rk_live_|xox[abposr]-|npm_|hf_|pypi-|shpat_|dop_v1_|AIza)(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,}/,
  },
  { kind: 'an AWS access key id', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'a URL with a password', pattern: URL_WITH_PASSWORD },
];

/** What kind of secret `value` looks like, or undefined when it looks like none. */
export function secretValueKind(value: string): string | undefined {
  return SECRET_VALUES.find((entry) => entry.pattern.test(value))?.kind;
}

export interface EnvironmentPolicy {
  /** Globs passed besides `DEFAULT_ALLOWED_NAMES`. Default: none. */
  include: readonly string[];
  /** Globs dropped even when allowed or included; they beat `include`. Default: none. */
  exclude: readonly string[];
}

function globPattern(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i');
}

/** The policy from a worker's `SWITCHYARD_ENV_INCLUDE` and `SWITCHYARD_ENV_EXCLUDE` (comma-separated globs). */
export function environmentPolicyFromEnv(env: ToolEnvironment): EnvironmentPolicy {
  const globs = (name: string): string[] =>
    (env[name] ?? '')
      .split(',')
      .map((glob) => glob.trim())
      .filter((glob) => glob !== '');
  return { include: globs('SWITCHYARD_ENV_INCLUDE'), exclude: globs('SWITCHYARD_ENV_EXCLUDE') };
}

const matchesAny = (name: string, globs: readonly string[]): boolean =>
  globs.some((glob) => globPattern(glob).test(name));

/**
 * Whether a child process may see the variable `name` (with `value`, when given) under `policy`: its name is allowed
 * by default or included, not excluded, a secret-looking name is included by an exact name, and the value does not
 * look like a key or a token.
 */
export function isVariableAllowed(options: { name: string; policy: EnvironmentPolicy; value?: string }): boolean {
  const { name, policy, value } = options;
  if (matchesAny(name, policy.exclude)) return false;
  if (value !== undefined && secretValueKind(value) !== undefined) return false;
  if (matchesAny(name, DEFAULT_ALLOWED_NAMES)) return true;
  if (!matchesAny(name, policy.include)) return false;
  if (!matchesAny(name, SECRET_NAME_PATTERNS)) return true;
  // A secret-looking name passes only when the operator wrote it out (`NPM_TOKEN`), not through a wildcard.
  return policy.include.some((glob) => !/[*?]/.test(glob) && globPattern(glob).test(name));
}

/**
 * The environment a child process starts with: what `policy` allows of `env`. Without `env`, the worker's environment
 * and policy as its settings hold them (`toolSettings()`); with `env` and no `policy`, the policy `env` sets. Spawn with
 * `extendEnv: false`, or the dropped variables come back.
 */
export function childEnvironment(
  options: { env?: ToolEnvironment; policy?: EnvironmentPolicy } = {},
): Record<string, string> {
  const settings = options.env === undefined ? toolSettings() : undefined;
  const env = options.env ?? settings?.environment ?? {};
  const policy = options.policy ?? settings?.environmentPolicy ?? environmentPolicyFromEnv(env);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isVariableAllowed({ name, policy, value })) kept[name] = value;
  }
  return kept;
}
