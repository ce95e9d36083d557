import { describe, expect, it } from 'vitest';
import { lastNonEmptyLine, progressHeartbeat, toolProgressFromHeartbeat } from '../../src/contracts/progress.js';

describe('lastNonEmptyLine', () => {
  it('skips trailing blank lines and keeps the line as printed', () => {
    expect(lastNonEmptyLine('line1\nline2\n\n  \n')).toBe('line2');
    expect(lastNonEmptyLine('a\r\n  b  \r\n')).toBe('  b  ');
    expect(lastNonEmptyLine('\n\n')).toBeUndefined();
    expect(lastNonEmptyLine(undefined)).toBeUndefined();
  });
});

describe('progressHeartbeat', () => {
  it("takes a string as the tool's message and keeps only the known fields", () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(progressHeartbeat('Fetched 3 of 10 pages', at)).toEqual({
      message: 'Fetched 3 of 10 pages',
      reportedAt: '2026-01-02T03:04:05.000Z',
    });
    expect(progressHeartbeat({ outputTail: 'line1\nline2\n' }, at)).toEqual({
      outputTail: 'line1\nline2\n',
      reportedAt: '2026-01-02T03:04:05.000Z',
    });
  });
});

describe('toolProgressFromHeartbeat', () => {
  const details = {
    activeMs: 1200,
    queuedMs: 0,
    callId: 'c1',
    toolName: 'Bash',
    turnId: 't1',
    at: '2026-01-02T03:04:05.000Z',
    progress: { outputTail: 'line1\nline2\n', reportedAt: '2026-01-02T03:04:04.000Z' },
  };

  it("names the call, its output tail and latest line, and prefers the server's heartbeat time", () => {
    expect(
      toolProgressFromHeartbeat(details, { attempt: 1, heartbeatAt: new Date('2026-01-02T03:04:06.000Z') }),
    ).toEqual({
      callId: 'c1',
      toolName: 'Bash',
      turnId: 't1',
      outputTail: 'line1\nline2\n',
      latestLine: 'line2',
      reportedAt: '2026-01-02T03:04:04.000Z',
      updatedAt: '2026-01-02T03:04:06.000Z',
      attempt: 1,
    });
    expect(toolProgressFromHeartbeat(details, { attempt: 2 })?.updatedAt).toBe('2026-01-02T03:04:05.000Z');
  });

  it('takes the latest line from the message when there is no output tail', () => {
    expect(
      toolProgressFromHeartbeat(
        { ...details, progress: { message: 'step 1\nstep 2', reportedAt: 'x' } },
        { attempt: 1 },
      ),
    ).toMatchObject({ message: 'step 1\nstep 2', latestLine: 'step 2' });
  });

  it("ignores details that are not an execute activity's (no call id: an older worker, another activity)", () => {
    expect(
      toolProgressFromHeartbeat({ activeMs: 5, queuedMs: 0, progress: 'old string progress' }, { attempt: 1 }),
    ).toBeUndefined();
    expect(toolProgressFromHeartbeat(undefined, { attempt: 1 })).toBeUndefined();
    expect(toolProgressFromHeartbeat('text', { attempt: 1 })).toBeUndefined();
  });
});
