import { access, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SessionOptions } from '../../src/contracts/session.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import type { SessionHandle } from '../../src/client/switchyard-client.js';
import { bubblewrapAvailability } from '../../src/tools/sandbox/bubblewrap-availability.js';
import { BackgroundTaskStore } from '../../src/tools/background/background-task-store.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { taskOutputTool, taskStopTool } from '../../src/tools/background/background-task-tools.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { killProcess, spawnWorkerProcess } from '../support/spawn-worker.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The OS sandbox through real sessions on a real server, with the real Bash: what the kernel refuses even where the
 * permission rules allow everything (`bypassPermissions`). Needs bubblewrap on the machine (the test command
 * installs it); the last block takes it away (`SWITCHYARD_BWRAP` naming a missing binary).
 */

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

/** Sets worker env vars for one test (the worker runs in this process and reads them per call). */
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

/** A loopback HTTP server on the worker's host that counts the requests it got. */
async function loopbackServer(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((_request, response) => {
    count += 1;
    response.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the OS sandbox (bubblewrap) through real sessions', { timeout: 180_000 }, () => {
  let harness: Harness;
  let home: string;
  const env = workerEnv();
  const sessionEnv = workerEnv();
  beforeAll(async () => {
    const availability = await bubblewrapAvailability();
    if (!availability.available) throw new Error(`these tests need bubblewrap: ${availability.reason}`);
    harness = await createHarness({ tools: [bashTool, taskOutputTool, taskStopTool] });
    // The worker user's home: a fake one with the credentials an attacker wants (os.homedir() reads HOME).
    home = await scratchDir('switchyard-home-');
    await mkdir(path.join(home, '.ssh'));
    await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-MATERIAL\n');
    await mkdir(path.join(home, '.aws'));
    await writeFile(path.join(home, '.aws', 'credentials'), '[default]\naws_secret_access_key=AWS-SECRET\n');
    await writeFile(path.join(home, '.netrc'), 'machine example.com password NETRC-SECRET\n');
    sessionEnv.set({ HOME: home });
  });
  afterEach(() => env.restore());
  afterAll(async () => {
    sessionEnv.restore();
    await harness.close();
  });

  const bash = async (
    session: SessionHandle,
    turnId: string,
    command: string,
    extra: Record<string, unknown> = {},
  ): Promise<ToolResult> => {
    const turn = await session.executeTurn({
      turnId,
      calls: [{ id: 'b', name: 'Bash', input: { command, ...extra } }],
    });
    const [result] = turn.results;
    if (result === undefined) throw new Error('no result');
    return result;
  };

  const requiredSession = (
    cwd: string,
    sandbox: SessionOptions['sandbox'] = {},
    rules: SessionOptions['rules'] = {},
  ): Promise<SessionHandle> =>
    harness.startSession({
      cwd,
      permissionMode: 'bypassPermissions',
      rules,
      sandbox: { mode: 'required', ...sandbox },
    });

  it('bypassPermissions + required: reads and writes inside cwd, sandboxed is true', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'notes.txt'), 'inside the workspace\n');
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const result = await bash(
        session,
        't1',
        'cat notes.txt && echo written > out.txt && mkdir -p sub && echo deep > sub/f.txt && cat sub/f.txt && echo tmp > /tmp/x && cat /tmp/x',
      );
      expect(result).toMatchObject({ status: 'success', isError: false, sandboxed: true });
      expect(result.modelContent).toBe('inside the workspace\ndeep\ntmp\n');
    });
    expect(await readFile(path.join(cwd, 'out.txt'), 'utf8')).toBe('written\n');
    expect(await readFile(path.join(cwd, 'sub', 'f.txt'), 'utf8')).toBe('deep\n');
  });

  it("bypassPermissions + required: cannot read credentials, other sessions' data, another /tmp folder, Read(...) deny rules or denyRead", async () => {
    const cwd = await scratchDir();
    const elsewhere = await scratchDir('switchyard-elsewhere-');
    await writeFile(path.join(elsewhere, 'secret.txt'), 'TMP-SECRET\n');
    const otherSession = path.join(harness.dataDir, 'background', 'another-session');
    await mkdir(otherSession, { recursive: true });
    await writeFile(path.join(otherSession, 'output.log'), 'OTHER-SESSION-OUTPUT\n');
    await writeFile(path.join(cwd, '.env'), 'DOTENV-SECRET\n');
    await writeFile(path.join(cwd, 'private.key'), 'DENYREAD-SECRET\n');
    const secrets = [
      'PRIVATE-KEY-MATERIAL',
      'AWS-SECRET',
      'NETRC-SECRET',
      'TMP-SECRET',
      'OTHER-SESSION-OUTPUT',
      'DOTENV-SECRET',
      'DENYREAD-SECRET',
    ];
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd, { denyRead: ['private.key'] }, { deny: ['Read(.env)'] });
      const commands = [
        `cat ${home}/.ssh/id_ed25519`,
        'cat ~/.aws/credentials',
        'cat ~/.netrc',
        `cat ${elsewhere}/secret.txt`,
        `cat ${otherSession}/output.log`,
        // A link made in the same command: the permission rules see a path that does not exist yet; the kernel sees .env.
        'ln -sf .env alias-1 && cat alias-1',
        'ln -sf private.key alias-2 && cat alias-2',
      ];
      for (const [index, command] of commands.entries()) {
        const result = await bash(session, `t${index}`, command);
        expect(result.sandboxed, command).toBe(true);
        for (const secret of secrets) expect(result.modelContent, command).not.toContain(secret);
      }
    });
  });

  it('bypassPermissions + required: cannot write outside cwd, nor the protected paths inside it', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(cwd, '.git', 'config'), '[core]\n');
    const elsewhere = await scratchDir('switchyard-elsewhere-');
    const varTmp = path.join('/var/tmp', path.basename(elsewhere));
    await mkdir(varTmp, { recursive: true });
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const result = await bash(
        session,
        't1',
        [
          `echo x > ${elsewhere}/written.txt`,
          `echo x > ${varTmp}/written.txt`,
          `echo x > ${home}/.bashrc`,
          'echo "[core] fsmonitor = touch /tmp/pwned" >> .git/config',
          'echo x > .git/hooks/pre-commit',
          'echo still-here',
        ].join('; '),
      );
      expect(result.sandboxed).toBe(true);
      expect(result.modelContent).toContain('still-here');
    });
    expect(await exists(path.join(elsewhere, 'written.txt'))).toBe(false);
    expect(await exists(path.join(varTmp, 'written.txt'))).toBe(false);
    await rm(varTmp, { recursive: true, force: true });
    expect(await exists(path.join(home, '.bashrc'))).toBe(false);
    expect(await readFile(path.join(cwd, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(await exists(path.join(cwd, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('bypassPermissions + required: cannot reach a loopback HTTP server of the host', async () => {
    const cwd = await scratchDir();
    const server = await loopbackServer();
    try {
      await harness.withWorker(async () => {
        const session = await requiredSession(cwd);
        const result = await bash(
          session,
          't1',
          `curl -sS -m 5 http://127.0.0.1:${server.port}/; curl -sS -m 5 http://localhost:${server.port}/; (exec 3<>/dev/tcp/127.0.0.1/${server.port}) 2>&1; echo done`,
        );
        expect(result.sandboxed).toBe(true);
        expect(result.modelContent).not.toContain('hello from the host');
        expect(result.modelContent).toContain('done');
      });
      expect(server.requests()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("allowedDomains ['localhost:<port>'] reaches that host and only that host", async () => {
    const cwd = await scratchDir();
    const server = await loopbackServer();
    try {
      await harness.withWorker(async () => {
        const session = await requiredSession(cwd, { network: { allowedDomains: [`localhost:${server.port}`] } });
        const allowed = await bash(session, 't1', `curl -sS -m 10 http://localhost:${server.port}/`);
        expect(allowed).toMatchObject({ status: 'success', sandboxed: true });
        expect(allowed.modelContent).toBe('hello from the host\n');
        expect(server.requests()).toBe(1);
        // The same server under another name, and any other host: refused by the proxy, never connected.
        const refused = await bash(
          session,
          't2',
          `curl -sS -m 10 http://127.0.0.1:${server.port}/; curl -sS -m 10 https://example.com/; curl -sS -m 5 --noproxy '*' http://localhost:${server.port}/; echo done`,
        );
        expect(refused.modelContent).toContain("127.0.0.1 is not in the session's network.allowedDomains");
        expect(refused.modelContent).not.toContain('hello from the host');
        expect(refused.modelContent).toContain('done');
        expect(server.requests()).toBe(1);
      });
    } finally {
      await server.close();
    }
  });

  it('sandbox.autoAllowBash runs a default-ask command unasked, sandboxed; an ask rule still asks; without the option it asks', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const auto = await harness.startSession({ cwd, sandbox: { autoAllowBash: true } });
      const ran = await bash(auto, 't1', 'touch made-unasked && echo ok');
      expect(ran).toMatchObject({ status: 'success', modelContent: 'ok\n', sandboxed: true });
      for (const session of [
        await harness.startSession({ cwd, sandbox: { autoAllowBash: true }, rules: { ask: ['Bash(touch:*)'] } }),
        await harness.startSession({ cwd }),
      ]) {
        const turn = session.executeTurn({
          turnId: 't1',
          calls: [{ id: 'b', name: 'Bash', input: { command: 'touch made-after-asking' } }],
        });
        const [request] = await waitFor(
          () => session.pendingApprovals(),
          (list) => list.length === 1,
          { what: 'the approval request' },
        );
        if (request === undefined) throw new Error('no approval request');
        await session.approve({ requestId: request.requestId, decision: 'deny', inputDigest: request.inputDigest });
        expect((await turn).results[0]).toMatchObject({ status: 'denied' });
      }
    });
    expect(await exists(path.join(cwd, 'made-unasked'))).toBe(true);
    expect(await exists(path.join(cwd, 'made-after-asking'))).toBe(false);
  });

  it('a fork bomb ends with a clear error and the worker lives on', async () => {
    env.set({ SWITCHYARD_SANDBOX_MAX_PROCESSES: '64' });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      // Five seconds reach the limit many times over. The bomb keeps both cores busy until its deadline ends it, and
      // test files running meanwhile starve for as long: a fresh-clone CI run once saw a workflow task of another
      // file time out during a 20-second bomb.
      const bomb = await bash(session, 't1', 'bomb() { bomb | bomb; }; bomb', { timeout: 5_000 });
      expect(bomb).toMatchObject({ status: 'error', isError: true, sandboxed: true });
      expect(bomb.modelContent).toMatch(/process limit \(64 processes|Resource temporarily unavailable/);
      const after = await bash(session, 't2', 'echo alive');
      expect(after).toMatchObject({ status: 'success', modelContent: 'alive\n', sandboxed: true });
    });
  });

  it('sort /dev/zero ends with a clear error (the memory limit) and the worker lives on', async () => {
    env.set({ SWITCHYARD_SANDBOX_MEMORY_BYTES: String(256 * 1024 * 1024) });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const sort = await bash(session, 't1', 'sort /dev/zero', { timeout: 60_000 });
      expect(sort).toMatchObject({ status: 'error', isError: true, errorCode: 'exit_code', sandboxed: true });
      expect(sort.modelContent).toMatch(/sort: memory exhausted/);
      const after = await bash(session, 't2', 'echo alive');
      expect(after).toMatchObject({ status: 'success', modelContent: 'alive\n' });
    });
  });

  it('an interrupt ends every process of a sandboxed command, a SIGTERM-trapping loop included', async () => {
    const cwd = await scratchDir();
    const marker = `switchyard-sandbox-marker-${process.pid}-${Date.now()}`;
    /** Host processes named by the marker (`exec -a`; processes in the sandbox are host processes too). */
    const marked = async (): Promise<number> => {
      const entries = await readdir('/proc').catch(() => [] as string[]);
      const lines = await Promise.all(
        entries
          .filter((entry) => /^\d+$/.test(entry))
          .map((entry) => readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')),
      );
      return lines.filter((line) => line.split('\0')[0] === marker).length;
    };
    await harness.withWorker(async () => {
      const session = await requiredSession(cwd);
      const command = `trap '' TERM; (exec -a ${marker} sleep 300) & (exec -a ${marker} sleep 300) & while :; do echo tick >> ticks.log; sleep 0.1; done`;
      const turn = session.executeTurn({ turnId: 't1', calls: [{ id: 'b', name: 'Bash', input: { command } }] });
      await waitFor(marked, (count) => count === 2, { what: 'both marked sleeps to run', timeoutMs: 60_000 });
      await session.interrupt('stop');
      expect((await turn).results[0]).toMatchObject({ status: 'cancelled' });
      await waitFor(marked, (count) => count === 0, { what: 'every marked process to be gone', timeoutMs: 30_000 });
    });
  });

  it('a background task is sandboxed and outlives a SIGKILLed worker', async () => {
    const cwd = await scratchDir();
    const release = path.join(cwd, 'release');
    const worker = await spawnWorkerProcess(harness, { tools: 'builtin' });
    let session: SessionHandle;
    let taskId: string;
    try {
      session = await requiredSession(cwd);
      const started = await bash(
        session,
        't1',
        `cat ${home}/.ssh/id_ed25519 2>&1; echo x > /var/tmp/switchyard-bg-escape-$$ 2>&1; echo before; while [ ! -f release ]; do sleep 0.1; done; echo after`,
        { run_in_background: true },
      );
      expect(started).toMatchObject({ status: 'success', sandboxed: true });
      taskId = started.backgroundTask?.taskId ?? '';
      const outputPath = new BackgroundTaskStore(harness.dataDir).outputPath({ sessionId: session.sessionId, taskId });
      await waitFor(
        () => readFile(outputPath, 'utf8').catch(() => ''),
        (text) => text.includes('before'),
        { what: 'the task to begin' },
      );
    } finally {
      await killProcess(worker);
      // The worker is gone; the task goes on, and ends once released (also when an assertion above failed).
      await writeFile(release, '');
    }
    await harness.withWorker(async () => {
      const turn = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'read', name: 'TaskOutput', input: { task_id: taskId, timeout: 30_000 } }],
      });
      const output = turn.results[0]?.modelContent ?? '';
      expect(output).toContain('before\nafter\n');
      expect(output).toContain(`Task ${taskId} exited with code 0.`);
      expect(output).not.toContain('PRIVATE-KEY-MATERIAL');
      expect(output).toMatch(/Read-only file system/);
    });
  }, 240_000);
});

describe('without bubblewrap (SWITCHYARD_BWRAP names a missing binary)', { timeout: 120_000 }, () => {
  let harness: Harness;
  const env = workerEnv();
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools() });
  });
  afterEach(() => env.restore());
  afterAll(async () => harness.close());

  it('auto runs unsandboxed, says so in the result and in the Web UI details', async () => {
    env.set({ SWITCHYARD_BWRAP: '/nonexistent/switchyard-test/bwrap' });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const turn = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b', name: 'Bash', input: { command: 'echo ran > ran.txt; echo ok' } }],
      });
      expect(turn.results[0]).toMatchObject({ status: 'success', modelContent: 'ok\n', sandboxed: false });
      const metadata = await waitFor(
        () => session.workflow.query<{ currentDetails?: string }>('__temporal_workflow_metadata'),
        (value) => (value.currentDetails ?? '').includes('without the OS sandbox'),
        { what: 'the unsandboxed warning in the current details' },
      );
      expect(metadata.currentDetails).toContain(
        '**1 call(s) ran without the OS sandbox** on this worker: bubblewrap (/nonexistent/switchyard-test/bwrap) cannot sandbox here: it is not installed',
      );
    });
    expect(await exists(path.join(cwd, 'ran.txt'))).toBe(true);
  });

  it('required fails the call with sandbox_unavailable and runs nothing', async () => {
    env.set({ SWITCHYARD_BWRAP: '/nonexistent/switchyard-test/bwrap' });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        permissionMode: 'bypassPermissions',
        sandbox: { mode: 'required' },
      });
      const turn = await session.executeTurn({
        turnId: 't1',
        calls: [
          { id: 'fg', name: 'Bash', input: { command: 'echo ran > ran.txt' } },
          { id: 'bg', name: 'Bash', input: { command: 'echo ran > bg.txt', run_in_background: true } },
        ],
      });
      for (const result of turn.results) {
        expect(result).toMatchObject({ status: 'error', isError: true, errorCode: 'sandbox_unavailable' });
        expect(result.modelContent).toContain('This session requires the OS sandbox (sandbox.mode "required")');
      }
    });
    expect(await exists(path.join(cwd, 'ran.txt'))).toBe(false);
    expect(await exists(path.join(cwd, 'bg.txt'))).toBe(false);
  });

  it('the worker env SWITCHYARD_SANDBOX=required applies where the session sets no mode, and is a floor a session option cannot lower', async () => {
    env.set({ SWITCHYARD_BWRAP: '/nonexistent/switchyard-test/bwrap', SWITCHYARD_SANDBOX: 'required' });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, permissionMode: 'bypassPermissions' });
      const refused = await session.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b', name: 'Bash', input: { command: 'echo ok' } }],
      });
      expect(refused.results[0]).toMatchObject({ errorCode: 'sandbox_unavailable' });
      // A session asking for "off" is refused (at its start, or at the call): it never runs unsandboxed.
      const off = await harness.startSession({ cwd, permissionMode: 'bypassPermissions', sandbox: { mode: 'off' } });
      const ran = await off
        .executeTurn({ turnId: 't1', calls: [{ id: 'b', name: 'Bash', input: { command: 'echo ran > off.txt' } }] })
        .catch(() => undefined);
      if (ran !== undefined) expect(ran.results[0]).toMatchObject({ errorCode: 'sandbox_unavailable' });
    });
    expect(await exists(path.join(cwd, 'off.txt'))).toBe(false);
  });

  it('a session option "off" runs unsandboxed, loudly, where the worker sets no floor', async () => {
    env.set({ SWITCHYARD_BWRAP: '/nonexistent/switchyard-test/bwrap' });
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const off = await harness.startSession({ cwd, permissionMode: 'bypassPermissions', sandbox: { mode: 'off' } });
      const ran = await off.executeTurn({
        turnId: 't1',
        calls: [{ id: 'b', name: 'Bash', input: { command: 'echo ok' } }],
      });
      expect(ran.results[0]).toMatchObject({ status: 'success', modelContent: 'ok\n', sandboxed: false });
      const metadata = await off.workflow.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toContain('**Sandbox off**');
    });
  });
});
