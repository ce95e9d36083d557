import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { taskOutputTool } from '../../src/tools/background/background-task-tools.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';

/**
 * What a model's command sees of the worker's environment, through a real session with the real Bash (foreground and
 * background): an allow list, so the names a deny list missed never reach it, nor any value shaped like a key.
 */

/** Sets worker env vars for one test (the worker runs in this process; Bash reads the env at run time). */
function workerEnv(): { set(values: Record<string, string>): void; restore(): void } {
  const saved = new Map<string, string | undefined>();
  return {
    set(values) {
      for (const [name, value] of Object.entries(values)) {
        if (!saved.has(name)) saved.set(name, process.env[name]);
        process.env[name] = value;
      }
    },
    restore() {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      saved.clear();
    },
  };
}

/** The worker secrets a deny list of names missed, each value marked so a leak is found in any output. */
const MISSED_BY_A_DENY_LIST: Record<string, string> = {
  NPM_CONFIG__AUTH: 'leak-npm-auth-dXNlcjpwYXNz',
  DOCKER_AUTH_CONFIG: '{"auths":{"registry.example":{"auth":"leak-docker-auth"}}}',
  OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=leak-otel-header',
  SIGNING_KEY_PASSPHRASE: 'leak-passphrase',
  GPG_PASSPHRASE: 'leak-gpg-passphrase',
  SERVICE_JWT: 'leak-service-jwt',
  DEPLOY_PEM: '-----BEGIN OPENSSH PRIVATE KEY-----\nleak-pem-body\n-----END OPENSSH PRIVATE KEY-----',
};

/** Allowed or included names holding values shaped like keys or tokens: never passed either. */
const SECRET_SHAPED_VALUES: Record<string, string> = {
  LC_LEAK_BEARER: 'Authorization=Bearer leakbearer0123456789',
  LC_LEAK_JWT: 'eyJhbGciOiJIUzI1NiJ9.eyJsZWFrIjoiand0In0.leakjwtsignature',
  INCLUDED_GITHUB: 'ghp_leakGithubToken0123456789abcdefABCDEF',
  INCLUDED_OPENAI: 'sk-leakOpenAiKey0123456789abcdef',
};

describe('child processes get the worker environment by allow list (real server, real Bash)', () => {
  let harness: Harness;
  let cwd: string;
  const env = workerEnv();
  beforeAll(async () => {
    cwd = await scratchDir();
    harness = await createHarness({ tools: [bashTool, taskOutputTool], defaultCwd: cwd });
  });
  afterAll(async () => harness.close());
  afterEach(() => env.restore());

  it('keeps NPM_CONFIG__AUTH, DOCKER_AUTH_CONFIG, OTEL_EXPORTER_OTLP_HEADERS, passphrases, JWTs and PEM keys out of Bash and background tasks, and key-shaped values out even when allowed or included', async () => {
    env.set({
      ...MISSED_BY_A_DENY_LIST,
      ...SECRET_SHAPED_VALUES,
      NOT_ALLOWED_SETTING: 'leak-unlisted-setting',
      INCLUDED_SETTING: 'visible-included',
      SWITCHYARD_ENV_INCLUDE: 'INCLUDED_*',
      LC_VISIBLE: 'visible-locale',
    });
    const outcome = await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const foreground = await session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'env', name: 'Bash', input: { command: 'env' } },
          { id: 'proc', name: 'Bash', input: { command: 'cat /proc/self/environ | tr "\\0" "\\n"' } },
          { id: 'bg', name: 'Bash', input: { command: 'env; echo background-done', run_in_background: true } },
        ],
      });
      const taskId = foreground.results[2]?.backgroundTask?.taskId ?? '';
      const background = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read', name: 'TaskOutput', input: { task_id: taskId, timeout: 30_000 } }],
      });
      return [...foreground.results.slice(0, 2), ...background.results];
    });
    expect(outcome.map((result) => result.status)).toEqual(['success', 'success', 'success']);
    expect(outcome[2]?.modelContent).toContain('background-done');
    for (const result of outcome) {
      expect(result.modelContent).toContain('PATH=');
      expect(result.modelContent).toContain('HOME=');
      expect(result.modelContent).toContain('LC_VISIBLE=visible-locale');
      expect(result.modelContent).toContain('INCLUDED_SETTING=visible-included');
      expect(result.modelContent).not.toContain('leak');
      for (const name of [...Object.keys(MISSED_BY_A_DENY_LIST), ...Object.keys(SECRET_SHAPED_VALUES)])
        expect(result.modelContent).not.toContain(`${name}=`);
    }
  });
});
