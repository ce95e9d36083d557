import { describe, expect, it } from 'vitest';
import {
  childEnvironment,
  environmentPolicyFromEnv,
  isVariableAllowed,
  SECRET_NAME_PATTERNS,
} from '../../src/tools/support/environment-policy.js';

const none = { include: [], exclude: [] };

describe('environment policy for Bash and command hooks', () => {
  it.each([
    ['OPENAI_API_KEY', false],
    ['ssh_key_path', false],
    ['GITHUB_TOKEN', false],
    ['AWS_SECRET_ACCESS_KEY', false],
    ['PGPASSWORD', false],
    ['GOOGLE_APPLICATION_CREDENTIALS', false],
    ['Credential_Helper', false],
    ['PATH', true],
    ['HOME', true],
    ['LANG', true],
    ['SWITCHYARD_SESSION_ID', true],
    ['NODE_ENV', true],
  ] as const)('drops names that look like secrets by default: %s → %s', (name, allowed) => {
    expect(isVariableAllowed({ name, policy: none })).toBe(allowed);
  });

  it('anchors on codex (KEY, SECRET, TOKEN) and adds passwords, CREDENTIAL and personal access tokens', () => {
    expect(SECRET_NAME_PATTERNS).toEqual([
      '*KEY*',
      '*SECRET*',
      '*TOKEN*',
      '*PASSWORD*',
      '*PASSWD*',
      '*_PWD',
      '*CREDENTIAL*',
      '*_PAT',
      'PAT',
    ]);
  });

  it.each([
    ['GITHUB_PAT', 'ghp_abc', false],
    ['GITLAB_PAT', 'glpat-abc', false],
    ['DB_PASSWD', 'x', false],
    ['MYSQL_PWD', 'x', false],
    ['DATABASE_URL', 'postgres://app:s3cret@db.internal:5432/app', false],
    ['SENTRY_DSN', 'https://public:private@o1.ingest.sentry.io/1', false],
    ['HTTPS_PROXY', 'http://user:pass@proxy:3128', false],
    ['REPO', 'https://x-access:ghp_abc@github.com/o/r.git', false],
    ['DATABASE_URL', 'postgres://db.internal:5432/app', true],
    ['SERVICE_URL', 'https://user@example.com/path', true],
    ['PWD', '/work', true],
    ['OLDPWD', '/work', true],
    ['PATTERN', 'x', true],
  ] as const)('drops %s=%s unless it is plainly not a secret (→ %s)', (name, value, allowed) => {
    expect(isVariableAllowed({ name, value, policy: none })).toBe(allowed);
    expect(Object.keys(childEnvironment({ env: { [name]: value }, policy: none }))).toEqual(allowed ? [name] : []);
  });

  it('passes included names, drops excluded ones, and lets an exclude beat an include', () => {
    const policy = { include: ['NPM_TOKEN', 'tokenizers_*'], exclude: ['INTERNAL_*', 'NPM_TOKEN'] };
    expect(isVariableAllowed({ name: 'TOKENIZERS_PARALLELISM', policy })).toBe(true);
    expect(isVariableAllowed({ name: 'INTERNAL_URL', policy })).toBe(false);
    expect(isVariableAllowed({ name: 'NPM_TOKEN', policy })).toBe(false);
    expect(isVariableAllowed({ name: 'GITHUB_TOKEN', policy })).toBe(false);
    // `*` turns the defaults off; globs match whole names and treat regex characters literally.
    expect(isVariableAllowed({ name: 'MY_API_KEY', policy: { include: ['*'], exclude: [] } })).toBe(true);
    expect(isVariableAllowed({ name: 'AXB', policy: { include: [], exclude: ['A.B'] } })).toBe(true);
    expect(isVariableAllowed({ name: 'A.B', policy: { include: [], exclude: ['A.B'] } })).toBe(false);
    expect(isVariableAllowed({ name: 'XA', policy: { include: [], exclude: ['A?'] } })).toBe(true);
  });

  it('reads the policy from SWITCHYARD_ENV_INCLUDE and SWITCHYARD_ENV_EXCLUDE (comma-separated) and filters an env', () => {
    const env = {
      SWITCHYARD_ENV_INCLUDE: ' NPM_TOKEN , ',
      SWITCHYARD_ENV_EXCLUDE: 'DATABASE_URL',
      NPM_TOKEN: 'n',
      GH_TOKEN: 'g',
      DATABASE_URL: 'd',
      PATH: '/bin',
    };
    expect(environmentPolicyFromEnv(env)).toEqual({ include: ['NPM_TOKEN'], exclude: ['DATABASE_URL'] });
    expect(childEnvironment({ env })).toEqual({
      SWITCHYARD_ENV_INCLUDE: ' NPM_TOKEN , ',
      SWITCHYARD_ENV_EXCLUDE: 'DATABASE_URL',
      NPM_TOKEN: 'n',
      PATH: '/bin',
    });
    expect(childEnvironment({ env, policy: none })).toEqual({
      SWITCHYARD_ENV_INCLUDE: ' NPM_TOKEN , ',
      SWITCHYARD_ENV_EXCLUDE: 'DATABASE_URL',
      DATABASE_URL: 'd',
      PATH: '/bin',
    });
  });
});
