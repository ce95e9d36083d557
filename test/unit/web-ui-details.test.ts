import { describe, expect, it } from 'vitest';
import { sessionStartMetadata } from '../../src/client/session-metadata.js';
import type { ApprovalRequest } from '../../src/contracts/approval.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { CURRENT_DETAILS_LIMITS, describeInput, renderCurrentDetails } from '../../src/workflows/details.js';

const identity = { sessionId: 's-1', cwd: '/work/demo', permissionMode: undefined };

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    requestId: 'r-1',
    turnId: 't1',
    callId: 'c1',
    toolName: 'Bash',
    input: { command: 'rm -rf build', description: 'Clean up' },
    inputDigest: 'a'.repeat(64),
    reason: 'Bash needs approval for `rm -rf build`.',
    rememberRule: 'Bash(rm -rf build)',
    requestedAt: '2026-01-01T10:00:00.000Z',
    ...overrides,
  };
}

const view = (pending: ApprovalRequest[]) => ({ runningTurnId: 't1', queuedTurns: 0, completedTurns: 0, pending });

describe('Current Details in the Temporal Web UI', () => {
  it("names each pending call's command, since when it waits, and the signal JSON to paste", () => {
    const text = renderCurrentDetails({ identity, view: view([request()]), now: new Date('2026-01-01T10:03:05.000Z') });
    expect(text).toContain('Session `s-1` · cwd `/work/demo` · mode `default`');
    expect(text).toContain(
      '**1. Bash** `rm -rf build` — waiting since 2026-01-01T10:00:00.000Z (3m 5s at the last update)',
    );
    expect(text).not.toContain('Clean up');
    const json = /```json\n([^`]*)\n```/.exec(text)?.[1];
    expect(JSON.parse(json ?? '')).toEqual({ requestId: 'r-1', decision: 'allow', inputDigest: 'a'.repeat(64) });
    // Markdown needs a blank line before a list, or it renders inline.
    expect(text).toMatch(/\n\n- why: /);
    expect(text).toContain('why: Bash needs approval for \\`rm -rf build\\`.');
  });

  it('stays bounded: at most N requests listed, long commands clipped', () => {
    const many = Array.from({ length: 12 }, (_, index) =>
      request({ requestId: `r-${index}`, input: { command: `echo ${'x'.repeat(2_000)}` } }),
    );
    const text = renderCurrentDetails({ identity, view: view(many), now: new Date('2026-01-01T10:00:00.000Z') });
    expect(text.match(/```json/g)).toHaveLength(CURRENT_DETAILS_LIMITS.requests);
    expect(text).toContain(`…and ${12 - CURRENT_DETAILS_LIMITS.requests} more`);
    expect(text.length).toBeLessThan(6_000);
  });

  it('says idle without requests', () => {
    expect(
      renderCurrentDetails({
        identity,
        view: { runningTurnId: undefined, queuedTurns: 0, completedTurns: 2, pending: [] },
        now: new Date(0),
      }),
    ).toContain('**Idle.** 2 turn(s) completed.');
  });

  it('renders the resolved input a human approves: command, path, URL, pattern, else compact JSON', () => {
    expect(describeInput('Bash', { command: 'npm test', description: 'Run tests' })).toBe('npm test');
    expect(describeInput('Edit', { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' })).toBe('/w/a.ts');
    expect(describeInput('WebFetch', { url: 'https://example.com/x', prompt: 'summarise' })).toBe(
      'https://example.com/x',
    );
    expect(describeInput('Grep', { pattern: 'TODO', path: '/w/src' })).toBe('TODO in /w/src');
    expect(describeInput('mcp__notes__read', { id: 'n1' })).toBe('{"id":"n1"}');
    expect(describeInput('X', null)).toBe('');
  });

  it('keeps a backtick in a command from ending its code span', () => {
    const text = renderCurrentDetails({
      identity,
      view: view([request({ input: { command: 'echo `date`' } })]),
      now: new Date(0),
    });
    expect(text).toContain('**1. Bash** `` echo `date` `` —');
  });
});

describe('Current Details of a named session with the sandbox off', () => {
  it('puts the name and the session above the state, the sandbox notes below it, and the time last', () => {
    const text = renderCurrentDetails({
      identity: { ...identity, label: 'Deploy bot', sandboxMode: 'off' },
      view: {
        runningTurnId: undefined,
        queuedTurns: 0,
        completedTurns: 3,
        pending: [],
        unsandboxed: { calls: 2, lastReason: 'no bwrap' },
      },
      now: new Date('2026-01-01T10:00:00.000Z'),
    });
    expect(text.split('\n')).toEqual([
      '**Deploy bot**',
      '',
      'Session `s-1` · cwd `/work/demo` · mode `default`',
      '',
      '**Idle.** 3 turn(s) completed.',
      '',
      "**Sandbox off** (session option `sandbox.mode`): Bash and background tasks run with the worker's full rights.",
      '',
      '**2 call(s) ran without the OS sandbox** on this worker: no bwrap',
      '',
      '_Updated 2026-01-01T10:00:00.000Z (workflow time)._',
    ]);
  });
});

describe('static summary and details set at start', () => {
  it('names the session, cwd and permission mode, and how to approve from the Web UI', () => {
    const { staticSummary, staticDetails } = sessionStartMetadata(
      'wf-1',
      { cwd: '/work/demo', permissionMode: 'acceptEdits', rules: { deny: ['Bash(rm:*)'] } },
      'switchyard',
    );
    expect(staticSummary).toBe('Switchyard session wf-1 · cwd /work/demo · mode acceptEdits');
    expect(staticDetails).toContain('- cwd: `/work/demo`');
    expect(staticDetails).toContain('- deny rules: `Bash(rm:*)`');
    expect(staticDetails).toContain('Send a Signal, name `approval`');
    expect(staticDetails).toContain('`SwitchyardPendingApprovals > 0`');
  });
});

describe('Bash activity summary', () => {
  it("is the command, never the model's description", () => {
    expect(bashTool.summarize?.({ command: 'rm -rf build', description: 'List files' })).toBe('rm -rf build');
  });
});
