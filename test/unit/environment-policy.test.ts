import { afterEach, describe, expect, it } from 'vitest';
import { runCommandHook } from '../../src/hooks/command-runner.js';
import {
  childEnvironment,
  DEFAULT_ALLOWED_NAMES,
  environmentPolicyFromEnv,
  isVariableAllowed,
  secretValueKind,
  SECRET_NAME_PATTERNS,
} from '../../src/tools/support/environment-policy.js';

const none = { include: [], exclude: [] };

/** A PEM private key as an operator might keep one in a variable (the body is not a real key). */
const PEM =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ3b3JrZXIifQ.c2lnbmF0dXJlLW5vdC1yZWFs';

describe('environment policy for Bash, background tasks and command hooks (an allow list)', () => {
  it.each([
    ['PATH', true],
    ['HOME', true],
    ['LANG', true],
    ['LC_ALL', true],
    ['lc_ctype', true],
    ['TERM', true],
    ['TZ', true],
    ['USER', true],
    ['LOGNAME', true],
    ['SHELL', true],
    ['PWD', true],
    ['TMPDIR', true],
    ['OLDPWD', false],
    ['NODE_ENV', false],
    ['HARMLESS_SETTING', false],
    ['SWITCHYARD_SESSION_ID', false],
    ['OPENAI_API_KEY', false],
    ['GITHUB_TOKEN', false],
    ['AWS_SECRET_ACCESS_KEY', false],
  ] as const)('passes only the names a shell needs by default: %s → %s', (name, allowed) => {
    expect(isVariableAllowed({ name, policy: none })).toBe(allowed);
  });

  it('allows PATH, HOME, LANG, LC_*, TERM, TZ, USER, LOGNAME, SHELL, PWD and TMPDIR by default', () => {
    for (const name of ['PATH', 'HOME', 'LANG', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'PWD', 'TMPDIR'])
      expect(DEFAULT_ALLOWED_NAMES).toContain(name);
  });

  it.each([
    ['NPM_CONFIG__AUTH', 'dXNlcjpwYXNz'],
    ['DOCKER_AUTH_CONFIG', '{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'x-honeycomb-team=abc123'],
    ['SIGNING_KEY_PASSPHRASE', 'correct horse'],
    ['MY_PASSPHRASE', 'correct horse'],
    ['SERVICE_JWT', 'opaque'],
    ['DEPLOY_KEY_PEM', PEM],
    ['GITHUB_PAT', 'ghp_abc'],
    ['DATABASE_URL', 'postgres://app:s3cret@db.internal:5432/app'],
  ] as const)('drops %s (the side doors of a deny list)', (name, value) => {
    expect(isVariableAllowed({ name, value, policy: none })).toBe(false);
    expect(childEnvironment({ env: { [name]: value, PATH: '/bin' }, policy: none })).toEqual({ PATH: '/bin' });
  });

  it.each([
    ['a PEM block', PEM],
    ['a bearer header', 'Authorization=Bearer abcdefghijklmnop1234'],
    ['a basic header', 'Basic dXNlcjpwYXNzd29yZA=='],
    ['a JWT', JWT],
    ['a GitHub token', 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'],
    ['a fine-grained GitHub token', 'github_pat_11ABCDEFG0123456789abcdef'],
    ['an OpenAI key', 'sk-proj-4bC9dE2fG7hJ1kL3mN5pQ8rS'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij'],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
    ['an npm token', 'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'],
    ['a URL with a password', 'https://x-access:hunter2@github.com/o/r.git'],
  ])(
    'never passes a value that looks like a key or token (%s), even under an allowed or included name',
    (_kind, value) => {
      expect(secretValueKind(value)).toBeDefined();
      expect(isVariableAllowed({ name: 'HOME', value, policy: none })).toBe(false);
      expect(isVariableAllowed({ name: 'EXTRA', value, policy: { include: ['EXTRA', '*'], exclude: [] } })).toBe(false);
    },
  );

  it.each([
    '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '/work/node_modules/.bin:/home/u/.local/sk-tools-for-everything/bin:/usr/bin',
    'en_US.UTF-8',
    'xterm-256color',
    'Europe/Berlin',
    '/home/dev',
    'postgres://db.internal:5432/app',
    'Basic',
  ])('passes ordinary values (%s)', (value) => {
    expect(secretValueKind(value)).toBeUndefined();
    expect(isVariableAllowed({ name: 'PATH', value, policy: none })).toBe(true);
  });

  it('passes included names, drops excluded ones, and lets an exclude beat an include and a default', () => {
    const policy = {
      include: ['NPM_TOKEN', 'tokenizers_*', 'NODE_*'],
      exclude: ['INTERNAL_*', 'NODE_OPTIONS', 'LC_*'],
    };
    // TOKENIZERS_* looks like a secret (*TOKEN*): a wildcard does not pass it, the name written out does.
    expect(isVariableAllowed({ name: 'TOKENIZERS_PARALLELISM', policy })).toBe(false);
    expect(
      isVariableAllowed({
        name: 'TOKENIZERS_PARALLELISM',
        policy: { include: ['tokenizers_parallelism'], exclude: [] },
      }),
    ).toBe(true);
    expect(isVariableAllowed({ name: 'NODE_ENV', policy })).toBe(true);
    expect(isVariableAllowed({ name: 'NODE_OPTIONS', policy })).toBe(false);
    expect(isVariableAllowed({ name: 'INTERNAL_URL', policy })).toBe(false);
    expect(isVariableAllowed({ name: 'LC_ALL', policy })).toBe(false);
    expect(isVariableAllowed({ name: 'NPM_TOKEN', policy, value: 'opaque-internal-value' })).toBe(true);
    expect(isVariableAllowed({ name: 'NPM_TOKEN', policy: { ...policy, exclude: ['NPM_TOKEN'] } })).toBe(false);
    expect(isVariableAllowed({ name: 'GITHUB_TOKEN', policy })).toBe(false);
    // A wildcard include passes every name but the secret-looking ones; globs treat regex characters literally.
    const everything = { include: ['*'], exclude: [] };
    expect(isVariableAllowed({ name: 'NODE_ENV', policy: everything })).toBe(true);
    for (const name of [
      'MY_API_KEY',
      'NPM_CONFIG__AUTH',
      'DOCKER_AUTH_CONFIG',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'GPG_PASSPHRASE',
      'APP_JWT',
    ])
      expect(isVariableAllowed({ name, policy: everything }), name).toBe(false);
    expect(isVariableAllowed({ name: 'AXB', policy: { include: ['A.B'], exclude: [] } })).toBe(false);
    expect(isVariableAllowed({ name: 'A.B', policy: { include: ['A.B'], exclude: [] } })).toBe(true);
    expect(isVariableAllowed({ name: 'XA', policy: { include: ['A?'], exclude: [] } })).toBe(false);
  });

  it('keeps the secret-looking name patterns (codex anchors plus passphrases, JWTs, auth and headers)', () => {
    for (const pattern of [
      '*KEY*',
      '*SECRET*',
      '*TOKEN*',
      '*PASSWORD*',
      '*PASSPHRASE*',
      '*JWT*',
      '*_AUTH',
      '*HEADERS*',
    ])
      expect(SECRET_NAME_PATTERNS).toContain(pattern);
  });

  it('reads the policy from SWITCHYARD_ENV_INCLUDE and SWITCHYARD_ENV_EXCLUDE (comma-separated) and filters an env', () => {
    const env = {
      SWITCHYARD_ENV_INCLUDE: ' NPM_TOKEN , NODE_ENV',
      SWITCHYARD_ENV_EXCLUDE: 'TERM',
      NPM_TOKEN: 'n',
      GH_TOKEN: 'g',
      NODE_ENV: 'production',
      DATABASE_URL: 'd',
      TERM: 'xterm',
      PATH: '/bin',
      HOME: '/home/dev',
    };
    expect(environmentPolicyFromEnv(env)).toEqual({ include: ['NPM_TOKEN', 'NODE_ENV'], exclude: ['TERM'] });
    expect(childEnvironment({ env })).toEqual({
      NPM_TOKEN: 'n',
      NODE_ENV: 'production',
      PATH: '/bin',
      HOME: '/home/dev',
    });
    expect(childEnvironment({ env, policy: none })).toEqual({ TERM: 'xterm', PATH: '/bin', HOME: '/home/dev' });
  });
});

describe('command hooks get the same allow list', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  it('runs a hook without NPM_CONFIG__AUTH, DOCKER_AUTH_CONFIG, OTEL_EXPORTER_OTLP_HEADERS or a PEM value', async () => {
    Object.assign(process.env, {
      NPM_CONFIG__AUTH: 'leak-npm',
      DOCKER_AUTH_CONFIG: 'leak-docker',
      OTEL_EXPORTER_OTLP_HEADERS: 'leak-otel',
      HOOK_SETTING: 'visible-hook-setting',
      LC_KEY_IN_VALUE: PEM,
      SWITCHYARD_ENV_INCLUDE: 'HOOK_SETTING',
    });
    const outcome = await runCommandHook({ command: 'env', timeoutMs: 10_000, cwd: '/', input: {} });
    if (outcome.kind !== 'ok') throw new Error(`the hook failed: ${JSON.stringify(outcome)}`);
    expect(outcome.stdout).toContain('HOOK_SETTING=visible-hook-setting');
    expect(outcome.stdout).toContain('PATH=');
    expect(outcome.stdout).not.toContain('leak');
    expect(outcome.stdout).not.toContain('PRIVATE KEY');
  });
});
