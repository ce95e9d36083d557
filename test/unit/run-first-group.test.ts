import { describe, expect, it } from 'vitest';
import { RAN_FIRST_GROUP_BYTES, runFirstGroup, runGroup } from '../../src/activities/run-first-group.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { compactPlan } from '../../src/contracts/compact-plan.js';
import type { CallRules } from '../../src/contracts/decide-permission.js';
import { parseRules } from '../../src/contracts/permission-rules.js';
import type { CallOutcome, ExecuteCallInput } from '../../src/contracts/pipeline.js';

// Plans as Prepare makes them, for a read-only stand-in tool (`Lookup`; no real tool runs here: `executeCall` is a
// recording stand-in). The real tools through a real session: test/integration/local-calls.test.ts.
const cwd = '/work/project';
const policy = { maxTimeoutMs: 30_000, budgetMs: 1_000 };
const defaultRules: CallRules = { mode: 'default', rules: parseRules(undefined, () => undefined), remembered: [] };

function plan(callId: string, overrides: Partial<ReadyCallPlan> = {}): ReadyCallPlan {
  return {
    kind: 'ready',
    callId,
    toolName: 'Lookup',
    input: { key: callId },
    inputDigest: `digest-${callId}`,
    flags: {
      concurrentSafe: true,
      readOnly: true,
      destructive: false,
      sideEffectScope: 'none',
      idempotent: true,
      declaredReadOnly: true,
    },
    ruleContent: callId,
    ruleKind: 'text',
    rememberRule: `Lookup(${callId})`,
    hasPermissionRequestHooks: false,
    readsSessionState: false,
    summary: `Lookup: ${callId}`,
    timeoutMs: 10_000,
    interruptBehavior: 'cancel',
    alwaysAsk: false,
    stopTurnOnSuccess: false,
    cancelSiblingsOnError: false,
    editsInsideCwd: false,
    ...overrides,
  };
}

function outcome(modelContent: string): CallOutcome {
  return { status: 'success', modelContent, isError: false, activeMs: 1, queuedMs: 0 };
}

async function run(
  plans: ReadyCallPlan[],
  options: { rules?: CallRules; answer?: (input: ExecuteCallInput) => Promise<CallOutcome> } = {},
): Promise<{ ran: Record<string, CallOutcome> | undefined; executed: ExecuteCallInput[] }> {
  const executed: ExecuteCallInput[] = [];
  const ran = await runFirstGroup({
    session: { sessionId: 's' },
    calls: plans.map((each) => ({ id: each.callId, name: each.toolName, input: each.input })),
    prepared: { plans: plans.map((each) => compactPlan(each, { sameAsCall: true })), cwd },
    turnId: 't',
    rules: options.rules ?? defaultRules,
    localCalls: policy,
    executeCall: async (input) => {
      executed.push(input);
      return (options.answer ?? (async () => outcome(`ran ${input.plan.callId}`)))(input);
    },
  });
  return { ran, executed };
}

describe('runFirstGroup (Plan runs an allowed read-only first group)', () => {
  it('runs every call of a qualifying group under the local budget and returns the outcomes by call id', async () => {
    const { ran, executed } = await run([plan('a'), plan('b')]);
    expect(ran).toEqual({ a: outcome('ran a'), b: outcome('ran b') });
    expect(executed.map((input) => [input.plan.callId, input.localBudgetMs, input.cwd, input.turnId])).toEqual([
      ['a', 1_000, cwd, 't'],
      ['b', 1_000, cwd, 't'],
    ]);
    expect(executed[0]?.plan.input).toEqual({ key: 'a' });
  });

  it.each([
    ['a tool that cancels its siblings on error', { cancelSiblingsOnError: true }],
    ['a tool that reads session state', { readsSessionState: true }],
    ['a client tool', { clientTool: true as const }],
    ['a deadline over the local limit', { timeoutMs: 60_000 }],
    [
      'a call that is not read-only',
      {
        flags: { ...plan('x').flags, readOnly: false, declaredReadOnly: false, sideEffectScope: 'workspace' as const },
      },
    ],
    ['a PreToolUse hook that asks', { hook: { decision: 'ask' as const } }],
    ['a tool that always asks', { alwaysAsk: true }],
  ])('runs nothing when one call of the group is %s', async (_what, overrides) => {
    const { ran, executed } = await run([plan('a'), plan('b', overrides)]);
    expect(ran).toBeUndefined();
    expect(executed).toEqual([]);
  });

  it('runs nothing when a rule denies or asks for one call, or the mode denies it', async () => {
    for (const rules of [
      { ...defaultRules, rules: parseRules({ deny: ['Lookup(b)'] }, () => undefined) },
      { ...defaultRules, rules: parseRules({ ask: ['Lookup'] }, () => undefined) },
      { ...defaultRules, mode: 'dontAsk' as const, rules: parseRules({ ask: ['Lookup(a)'] }, () => undefined) },
    ]) {
      const { ran, executed } = await run([plan('a'), plan('b')], { rules });
      expect(ran).toBeUndefined();
      expect(executed).toEqual([]);
    }
  });

  it('leaves out a call whose execution failed, and every outcome past the byte budget, for the workflow to run', async () => {
    const big = 'x'.repeat(Math.ceil(RAN_FIRST_GROUP_BYTES / 2));
    const { ran } = await run([plan('a'), plan('fails'), plan('b'), plan('c')], {
      answer: async (input) => {
        if (input.plan.callId === 'fails') throw new Error('worker trouble');
        return outcome(big);
      },
    });
    // Each outcome is a little over half the budget: a fits; with b the total is over it, so b and c are left out.
    expect(Object.keys(ran ?? {})).toEqual(['a']);
  });
});

describe('runGroup (whether Plan may go on to the next group)', () => {
  async function mayContinue(
    plans: ReadyCallPlan[],
    answer: (input: ExecuteCallInput) => Promise<CallOutcome>,
    maxBytes?: number,
  ): Promise<boolean | undefined> {
    const ran = await runGroup({
      session: { sessionId: 's' },
      calls: plans.map((each) => ({ id: each.callId, name: each.toolName, input: each.input })),
      prepared: { plans: plans.map((each) => compactPlan(each, { sameAsCall: true })), cwd },
      turnId: 't',
      rules: defaultRules,
      localCalls: policy,
      executeCall: answer,
      ...(maxBytes === undefined ? {} : { maxBytes }),
    });
    return ran?.mayContinue;
  }
  const plain = async (input: ExecuteCallInput): Promise<CallOutcome> => outcome(`ran ${input.plan.callId}`);
  const onB =
    (changed: Partial<CallOutcome>) =>
    async (input: ExecuteCallInput): Promise<CallOutcome> => ({
      ...(await plain(input)),
      ...(input.plan.callId === 'b' ? changed : {}),
    });

  it('goes on after a group whose every call ran to an ordinary result, errors included', async () => {
    expect(await mayContinue([plan('a'), plan('b')], plain)).toBe(true);
    expect(await mayContinue([plan('a'), plan('b')], onB({ status: 'error', isError: true }))).toBe(true);
  });

  it.each([
    ['stops the turn', { turnControl: { stopTurn: true, reason: 'enough' } }],
    ['moved to a regular activity', { relocate: true as const }],
    [
      'started a background task',
      { backgroundTask: { kind: 'started', taskId: 'x' } as CallOutcome['backgroundTask'] },
    ],
  ])('stops after a group one of whose calls %s', async (_what, changed) => {
    expect(await mayContinue([plan('a'), plan('b')], onB(changed))).toBe(false);
  });

  it('stops after a group whose PreToolUse hook stops the turn, a failed call, or outcomes past its bytes', async () => {
    expect(await mayContinue([plan('a'), plan('b', { hook: { stopTurn: { reason: 'hook' } } })], plain)).toBe(false);
    const failing = async (input: ExecuteCallInput): Promise<CallOutcome> => {
      if (input.plan.callId === 'b') throw new Error('worker trouble');
      return plain(input);
    };
    expect(await mayContinue([plan('a'), plan('b')], failing)).toBe(false);
    expect(await mayContinue([plan('a'), plan('b')], plain, 10)).toBe(false);
  });
});
