import { describe, expect, it } from 'vitest';
import type { CallPlan } from '../../src/contracts/call-plan.js';
import type { ToolResult } from '../../src/contracts/tool-result.js';
import { resultsInOrder, startableCalls } from '../../src/workflows/streaming-turn.js';
import type { StreamingCall, StreamingCallState } from '../../src/workflows/streaming-turn.js';

function plan(safe: boolean | 'rejected'): CallPlan {
  if (safe === 'rejected') return { kind: 'rejected', callId: 'x', toolName: 'X', status: 'error', modelContent: 'no', errorCode: 'e', stage: 'lookup' };
  return {
    kind: 'ready',
    callId: 'x',
    toolName: 'X',
    input: {},
    inputDigest: '',
    flags: { concurrentSafe: safe, readOnly: safe, destructive: false, sideEffectScope: 'none', idempotent: safe, declaredReadOnly: safe },
    summary: 'X',
    interruptBehavior: 'cancel',
    alwaysAsk: false,
    stopTurnOnSuccess: false,
    cancelSiblingsOnError: false,
    ruleKind: 'text',
    rememberRule: 'X',
    editsInsideCwd: false,
    hasPermissionRequestHooks: false,
  };
}

function calls(spec: Array<[boolean | 'rejected' | 'unprepared', StreamingCallState]>): StreamingCall[] {
  return spec.map(([safe, state], index) => ({
    index,
    call: { id: `c${index}`, name: 'X', input: {} },
    addedAt: 0,
    state,
    ...(safe === 'unprepared' ? {} : { plan: plan(safe) }),
  }));
}

const ids = (list: StreamingCall[]) => list.map((call) => call.call.id);

describe('startableCalls (streaming executor)', () => {
  it('starts any call when nothing executes, and safe calls beside safe ones', () => {
    expect(ids(startableCalls(calls([[true, 'queued'], [true, 'queued'], [true, 'queued']]), 10))).toEqual(['c0', 'c1', 'c2']);
    expect(ids(startableCalls(calls([[true, 'executing'], [true, 'queued']]), 10))).toEqual(['c1']);
  });

  it('makes an exclusive call wait for the running ones and block those behind it', () => {
    expect(ids(startableCalls(calls([[true, 'executing'], [false, 'queued'], [true, 'queued']]), 10))).toEqual([]);
    expect(ids(startableCalls(calls([[true, 'completed'], [false, 'queued'], [true, 'queued']]), 10))).toEqual(['c1']);
    expect(ids(startableCalls(calls([[false, 'executing'], [true, 'queued']]), 10))).toEqual([]);
  });

  it('treats rejected and unprepared calls as blocking (fail closed)', () => {
    expect(ids(startableCalls(calls([[true, 'executing'], ['rejected', 'queued']]), 10))).toEqual([]);
    expect(ids(startableCalls(calls([['unprepared', 'queued'], [true, 'queued']]), 10))).toEqual([]);
  });

  it('caps the executing set at maxConcurrency', () => {
    expect(ids(startableCalls(calls([[true, 'executing'], [true, 'queued'], [true, 'queued']]), 2))).toEqual(['c1']);
  });
});

describe('resultsInOrder', () => {
  it('hands out results in call order, stopping at the first unfinished call', () => {
    const list = calls([[true, 'completed'], [true, 'executing'], [true, 'completed']]);
    const result = (id: string) => ({ callId: id }) as ToolResult;
    list[0] = { ...list[0]!, result: result('c0') };
    list[2] = { ...list[2]!, result: result('c2') };
    expect(resultsInOrder(list, 0).map((r) => r.callId)).toEqual(['c0']);
    expect(resultsInOrder(list, 1)).toEqual([]);
    list[1] = { ...list[1]!, result: result('c1') };
    expect(resultsInOrder(list, 1).map((r) => r.callId)).toEqual(['c1', 'c2']);
  });
});
