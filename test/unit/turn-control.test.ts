import { describe, expect, it } from 'vitest';
import { hookContextOf, joinHookContext, withHookContext } from '../../src/contracts/hook-context.js';
import { HOOK_STOP_REASONS, turnControlOf, turnStopReason } from '../../src/contracts/turn-control.js';

const pre = { reason: 'pre says stop' };
const post = { reason: 'post says stop' };

describe('turnControlOf', () => {
  it('says nothing when no source asks', () => {
    expect(turnControlOf({ toolName: 'Read' })).toBeUndefined();
    expect(turnControlOf({ toolName: 'Read', stopOnSuccess: false })).toBeUndefined();
  });

  it("keeps the tool's own answer, stop or go on", () => {
    expect(turnControlOf({ toolName: 'Ask', current: { stopTurn: true, reason: 'asked the user' } })).toEqual({
      stopTurn: true,
      reason: 'asked the user',
    });
    expect(turnControlOf({ toolName: 'Ask', current: { stopTurn: false } })).toEqual({ stopTurn: false });
  });

  it('stops after a success of a stopTurnOnSuccess tool, naming the tool, unless the tool answered itself', () => {
    expect(turnControlOf({ toolName: 'SubmitResult', stopOnSuccess: true })).toEqual({
      stopTurn: true,
      reason: 'SubmitResult requested a turn stop',
    });
    expect(turnControlOf({ toolName: 'SubmitResult', current: { stopTurn: false }, stopOnSuccess: true })).toEqual({
      stopTurn: false,
    });
  });

  it("lets a PostToolUse hook stop the turn, over a tool's go on, but not over a stop already decided", () => {
    expect(turnControlOf({ toolName: 'Bash', postToolUse: post })).toEqual({
      stopTurn: true,
      reason: 'post says stop',
    });
    expect(turnControlOf({ toolName: 'Bash', current: { stopTurn: false }, postToolUse: post })).toEqual({
      stopTurn: true,
      reason: 'post says stop',
    });
    expect(turnControlOf({ toolName: 'Bash', current: { stopTurn: true, reason: 'tool' }, postToolUse: post })).toEqual(
      { stopTurn: true, reason: 'tool' },
    );
    expect(turnControlOf({ toolName: 'SubmitResult', stopOnSuccess: true, postToolUse: post })).toEqual({
      stopTurn: true,
      reason: 'SubmitResult requested a turn stop',
    });
  });

  it('applies a PreToolUse hook stop only when nothing else said anything', () => {
    expect(turnControlOf({ toolName: 'Bash', preToolUse: pre })).toEqual({ stopTurn: true, reason: 'pre says stop' });
    expect(turnControlOf({ toolName: 'Bash', current: { stopTurn: false }, preToolUse: pre })).toEqual({
      stopTurn: false,
    });
    expect(turnControlOf({ toolName: 'Bash', current: { stopTurn: true, reason: 'tool' }, preToolUse: pre })).toEqual({
      stopTurn: true,
      reason: 'tool',
    });
    expect(turnControlOf({ toolName: 'Bash', postToolUse: post, preToolUse: pre })).toEqual({
      stopTurn: true,
      reason: 'post says stop',
    });
  });

  it('composes: Execute decides from the tool and PostToolUse, the workflow adds PreToolUse to that', () => {
    const cases = [
      { current: undefined, stopOnSuccess: false, postToolUse: undefined, preToolUse: pre },
      { current: { stopTurn: false }, stopOnSuccess: true, postToolUse: post, preToolUse: pre },
      { current: undefined, stopOnSuccess: true, postToolUse: undefined, preToolUse: pre },
      { current: { stopTurn: false }, stopOnSuccess: false, postToolUse: undefined, preToolUse: pre },
      { current: undefined, stopOnSuccess: false, postToolUse: undefined, preToolUse: undefined },
    ];
    for (const sources of cases) {
      const output = turnControlOf({ toolName: 'T', current: sources.current, stopOnSuccess: sources.stopOnSuccess });
      const execute = turnControlOf({ toolName: 'T', current: output, postToolUse: sources.postToolUse });
      const workflow = turnControlOf({ toolName: 'T', current: execute, preToolUse: sources.preToolUse });
      expect(workflow).toEqual(turnControlOf({ toolName: 'T', ...sources }));
    }
  });

  it('names the default reasons of hook stops', () => {
    expect(HOOK_STOP_REASONS).toEqual({
      preToolUse: 'A PreToolUse hook stopped the turn.',
      postToolUse: 'A PostToolUse hook stopped the turn.',
    });
  });
});

describe('turnStopReason', () => {
  it("is the control's reason, or the tool's name when it gives none, and nothing unless it stops", () => {
    expect(turnStopReason({ toolName: 'Bash' })).toBeUndefined();
    expect(turnStopReason({ toolName: 'Bash', turnControl: { stopTurn: false, reason: 'ignored' } })).toBeUndefined();
    expect(turnStopReason({ toolName: 'Bash', turnControl: { stopTurn: true, reason: 'done' } })).toBe('done');
    expect(turnStopReason({ toolName: 'Bash', turnControl: { stopTurn: true } })).toBe('Bash requested a turn stop');
  });
});

describe('hook additional context', () => {
  it('keeps the non-empty texts of hook answers, in order', () => {
    expect(
      hookContextOf([
        { additionalContext: 'a' },
        {},
        { additionalContext: '' },
        { additionalContext: 3 },
        { additionalContext: 'b' },
      ]),
    ).toEqual(['a', 'b']);
  });

  it('joins PreToolUse context before PostToolUse context', () => {
    expect(joinHookContext(['pre'], ['post 1', 'post 2'])).toEqual(['pre', 'post 1', 'post 2']);
    expect(joinHookContext(undefined, ['post'])).toEqual(['post']);
    expect(joinHookContext(undefined, undefined)).toEqual([]);
  });

  it('appends the context to the content, numbered, under its header', () => {
    expect(withHookContext('output\n\n', [])).toBe('output\n\n');
    expect(withHookContext('output\n\n', ['one', 'two'])).toBe('output\n\n[Hook additional context]\n1. one\n2. two');
  });
});
