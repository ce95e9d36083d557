// Small fidelity items of the pipeline, as pure logic: the concurrency flags of a tool that declares only `readOnly`,
// a tool's deadline for one input, the hook context of a call Prepare rejects after its hooks, and the Bash calls
// that join a group after a Bash sibling failed.
import type { CancellationScope } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { computeFlags } from '../../src/activities/plan-call.js';
import { prepareCall } from '../../src/activities/prepare-call.js';
import { resolveTimeoutMs } from '../../src/activities/resolve-timeout.js';
import type { ReadyCallPlan } from '../../src/contracts/call-plan.js';
import { groupCalls } from '../../src/contracts/group-calls.js';
import { builtinTools } from '../../src/tools/builtin.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { SiblingGroup } from '../../src/workflows/sibling-group.js';
import { scratchDir } from '../support/scratch.js';

describe('a custom tool that declares only readOnly (docs/SEMANTICS.md, Deliberate choices)', () => {
  it('runs alone: concurrency is its own declaration, and undeclared means exclusive', () => {
    const lookup = defineTool({
      name: 'LookupEntry',
      description: 'Looks an entry up.',
      inputSchema: z.object({ id: z.string() }),
      readOnly: true,
      async execute() {
        return '';
      },
    });
    const scoped = defineTool({
      name: 'ScopedLookup',
      description: 'Looks an entry up.',
      inputSchema: z.object({ id: z.string() }),
      sideEffectScope: 'none',
      async execute() {
        return '';
      },
    });
    const flags = computeFlags(lookup, { id: 'a' });
    expect(flags).toMatchObject({ readOnly: true, sideEffectScope: 'none', concurrentSafe: false });
    expect(computeFlags(scoped, { id: 'a' }).concurrentSafe).toBe(false);
    expect(
      groupCalls(
        [
          { id: 'a', concurrentSafe: flags.concurrentSafe },
          { id: 'b', concurrentSafe: flags.concurrentSafe },
        ],
        10,
      ),
    ).toEqual([['a'], ['b']]);
  });
});

describe("a tool's deadline for one input (resolveBudgetMs)", () => {
  const policy = {
    defaultMs: 30_000,
    maxMs: 150_000,
    allowCallOverride: true,
    resolveBudgetMs: (input: unknown) =>
      (input as { pages?: string }).pages === undefined ? undefined : 150_000 + 1_000_000,
  };
  it('comes before the call override and the default, capped at maxMs', () => {
    expect(resolveTimeoutMs({ timeout: policy }, { pages: '1-500', timeout: 5_000 })).toBe(150_000);
  });
  it('leaves the next rule to decide when it gives nothing usable or throws', () => {
    expect(resolveTimeoutMs({ timeout: policy }, { timeout: 5_000 })).toBe(5_000);
    expect(resolveTimeoutMs({ timeout: { ...policy, resolveBudgetMs: () => Number.NaN } }, {})).toBe(30_000);
    expect(resolveTimeoutMs({ timeout: { ...policy, resolveBudgetMs: () => -1 } }, {})).toBe(30_000);
    const throws = {
      ...policy,
      resolveBudgetMs: () => {
        throw new Error('no');
      },
    };
    expect(resolveTimeoutMs({ timeout: throws }, {})).toBe(30_000);
  });
  it('has no say over a tool without a deadline', () => {
    expect(resolveTimeoutMs({ timeout: { kind: 'none', resolveBudgetMs: () => 5 } }, {})).toBeUndefined();
  });
});

describe('a call Prepare rejects after its PreToolUse hooks', () => {
  it("keeps the hooks' context after the rejection", async () => {
    const cwd = await scratchDir('switchyard-small-items-');
    const plan = await prepareCall({
      registry: new ToolRegistry(builtinTools()),
      call: { id: 'b', name: 'Bash', input: { command: 'echo original' } },
      context: { sessionId: 's', cwd, allowRules: [], denyRules: [] },
      hooks: {
        preToolUse: [
          { run: () => ({ additionalContext: 'first look' }) },
          { run: () => ({ updatedInput: { command: 42 }, additionalContext: 'rewrote the command' }) },
        ],
      },
    });
    expect(plan.kind).toBe('rejected');
    expect(plan.kind === 'rejected' ? plan.modelContent : '').toMatch(
      /^<tool_use_error>InputValidationError: input rewritten by a PreToolUse hook is invalid: .*<\/tool_use_error>\n\n\[Hook additional context\]\n1\. first look\n2\. rewrote the command$/s,
    );
  });
});

describe('SiblingGroup: Bash calls that join after a Bash sibling failed', () => {
  const bash = (callId: string, command: string): ReadyCallPlan =>
    ({ callId, toolName: 'Bash', summary: `Bash: ${command}` }) as ReadyCallPlan;
  const scope = (): CancellationScope & { cancelled: boolean } => {
    const fake = {
      cancelled: false,
      cancel() {
        fake.cancelled = true;
      },
    };
    return fake as unknown as CancellationScope & { cancelled: boolean };
  };

  it('cancels a Bash call that joins the group after the failure, naming the failed call', () => {
    const group = new SiblingGroup({ cancelsLateJoiners: () => true });
    const running = scope();
    group.add(bash('a', 'cat missing.txt'), scope());
    group.add(bash('b', 'ls'), running);
    group.cancelOthers(bash('a', 'cat missing.txt'));
    group.remove('a');
    expect(running.cancelled).toBe(true);
    const late = scope();
    group.add(bash('c', 'cat a.txt'), late);
    expect(late.cancelled).toBe(true);
    expect(group.cancelledBy('c')).toBe('Bash(cat missing.txt)');
    // Another tool joining is not its sibling.
    const read = scope();
    group.add({ callId: 'd', toolName: 'Read', summary: 'Read: a.txt' } as ReadyCallPlan, read);
    expect(read.cancelled).toBe(false);
  });

  it('lets a late Bash call run in a history recorded before the rule', () => {
    const group = new SiblingGroup({ cancelsLateJoiners: () => false });
    group.add(bash('a', 'cat missing.txt'), scope());
    group.cancelOthers(bash('a', 'cat missing.txt'));
    const late = scope();
    group.add(bash('c', 'cat a.txt'), late);
    expect(late.cancelled).toBe(false);
    expect(group.cancelledBy('c')).toBeUndefined();
  });
});
