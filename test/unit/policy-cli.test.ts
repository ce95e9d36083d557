import { describe, expect, it } from 'vitest';
import { policyCommand, summariseShadow } from '../../src/cli/policy-commands.js';
import type { SessionEvent } from '../../src/contracts/events.js';

const shadow = (
  callId: string,
  enforced: 'allow' | 'ask' | 'deny',
  shadowBehavior: 'allow' | 'ask' | 'deny',
): SessionEvent => ({
  type: 'PolicyShadowDecision',
  seq: 0,
  at: '2026-01-01T00:00:00.000Z',
  turnId: 't1',
  callId,
  toolName: 'Bash',
  enforced,
  shadow: shadowBehavior,
  shadowReason: 'by the rule Bash(touch:*)',
  policyVersion: 1,
});

describe('switchyard policy', () => {
  it('diff sums up shadow decisions by change, with each call', () => {
    const events: SessionEvent[] = [
      shadow('a', 'allow', 'deny'),
      { type: 'TurnStarted', seq: 1, at: '', turnId: 't1', callIds: [], streaming: false },
      shadow('b', 'allow', 'deny'),
      shadow('c', 'ask', 'allow'),
    ];
    expect(summariseShadow(events)).toEqual({
      changes: [
        {
          change: 'allow -> deny',
          count: 2,
          calls: [expect.objectContaining({ callId: 'a' }), expect.objectContaining({ callId: 'b' })],
        },
        {
          change: 'ask -> allow',
          count: 1,
          calls: [expect.objectContaining({ callId: 'c', turnId: 't1', reason: 'by the rule Bash(touch:*)' })],
        },
      ],
    });
  });

  it.each([
    [['set', '--allow', 'Bash(touch:*)'], 'needs --session'],
    [['set', '--session', 's1'], 'needs a rule'],
    [['set', '--session', 's1', '--allow', 'Bash(touch:*'], 'Invalid permission rule'],
    [['set', '--session', 's1', '--mode', 'yolo'], '--mode must be one of'],
    [['diff'], 'needs --session'],
    [['bogus'], 'no subcommand'],
  ])('rejects %j before contacting any server', async (args, message) => {
    await expect(policyCommand(args)).rejects.toThrow(message);
  });
});
