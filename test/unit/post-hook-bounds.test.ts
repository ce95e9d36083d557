// Post hooks never turn a finished call into a failure: a hook that throws, times out or runs past a local call's
// bound adds its error to the hook context and changes nothing else (docs/SEMANTICS.md, Hooks).
import { describe, expect, it } from 'vitest';
import { localPostHookBoundMs } from '../../src/activities/execute-call.js';
import { commandHooks } from '../../src/hooks/command-hooks.js';
import { postHookOverrun, runPostToolUseHooks } from '../../src/hooks/post-tool-use.js';
import type { SwitchyardHooks } from '../../src/hooks/types.js';
import { scratchDir } from '../support/scratch.js';

const call = { sessionId: 's', cwd: '/tmp', toolName: 'Read', toolInput: { file_path: 'a.txt' }, toolUseId: 'c1' };
const success = { status: 'success' as const, modelContent: 'alpha', isError: false };

describe('post hooks and their bound', () => {
  it('stops a hook that runs past the bound, reports it, and reports the hooks after it as not run', async () => {
    let signalled = false;
    const hooks: SwitchyardHooks = {
      postToolUse: [
        { run: () => ({ additionalContext: 'first hook' }) },
        {
          name: 'hangs',
          run: (_input, context) =>
            new Promise(() => {
              context?.signal.addEventListener('abort', () => {
                signalled = true;
              });
            }),
        },
        { name: 'later', run: () => ({ additionalContext: 'never seen' }) },
      ],
    };
    const outcome = await runPostToolUseHooks({
      hooks,
      call,
      result: success,
      toolOutput: undefined,
      onWarning: undefined,
      boundMs: 50,
    });
    expect(signalled).toBe(true);
    expect(outcome?.additionalContext).toEqual([
      'first hook',
      postHookOverrun('PostToolUse hook "hangs"', 50, true),
      postHookOverrun('PostToolUse hook "later"', 50, false),
    ]);
    expect(outcome?.stopTurn).toBeUndefined();
  });

  it("reports a hook that throws as the hook's error and keeps the others' answers, in order", async () => {
    const hooks: SwitchyardHooks = {
      postToolUseFailure: [
        {
          run: () => {
            throw new Error('broken hook');
          },
        },
        { run: () => ({ additionalContext: 'second', continue: false, stopReason: 'enough' }) },
      ],
    };
    const outcome = await runPostToolUseHooks({
      hooks,
      call,
      result: { status: 'error', modelContent: 'failed', isError: true },
      toolOutput: undefined,
      onWarning: undefined,
    });
    expect(outcome?.additionalContext).toEqual(['PostToolUseFailure hook failed: broken hook', 'second']);
    expect(outcome?.stopTurn).toEqual({ reason: 'enough' });
  });

  it("kills a command hook's process at the bound and names its command", async () => {
    const cwd = await scratchDir('switchyard-post-bound-');
    const hooks = commandHooks({
      hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: 'sleep 20', timeout: 30 }] }] },
    });
    const outcome = await runPostToolUseHooks({
      hooks,
      call: { ...call, cwd },
      result: success,
      toolOutput: undefined,
      onWarning: undefined,
      boundMs: 200,
    });
    expect(outcome?.additionalContext).toEqual([postHookOverrun('PostToolUse hook "sleep 20"', 200, true)]);
  });

  it("reports a command hook's own timeout as its error", async () => {
    const cwd = await scratchDir('switchyard-post-bound-');
    const hooks = commandHooks({
      hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: 'sleep 20', timeout: 0.2 }] }] },
    });
    const outcome = await runPostToolUseHooks({
      hooks,
      call: { ...call, cwd },
      result: success,
      toolOutput: undefined,
      onWarning: undefined,
    });
    expect(outcome?.additionalContext).toEqual(['PostToolUse hook "sleep 20" timed out after 200ms']);
  });

  it('stops the hooks when the call is cancelled', async () => {
    const cancel = new AbortController();
    const hooks: SwitchyardHooks = {
      postToolUse: [
        {
          run: (_input, context) =>
            new Promise((_resolve, reject) => {
              context?.signal.addEventListener('abort', () => reject(new Error('was cancelled')));
              cancel.abort();
            }),
        },
      ],
    };
    const outcome = await runPostToolUseHooks({
      hooks,
      call,
      result: success,
      toolOutput: undefined,
      onWarning: undefined,
      signal: cancel.signal,
    });
    expect(outcome?.additionalContext).toEqual(['PostToolUse hook failed: was cancelled']);
  });

  it('runs the PostToolUseFailure hooks of a call its cancellation already ended', async () => {
    const cwd = await scratchDir('switchyard-post-bound-');
    const cancelled = new AbortController();
    cancelled.abort();
    const hooks = commandHooks({
      hooks: {
        PostToolUseFailure: [
          { hooks: [{ type: 'command', command: `echo '{"additionalContext":"saw the interrupt"}'` }] },
        ],
      },
    });
    const outcome = await runPostToolUseHooks({
      hooks,
      call: { ...call, cwd },
      result: { status: 'cancelled', modelContent: 'rejected', isError: true },
      toolOutput: undefined,
      onWarning: undefined,
      signal: cancelled.signal,
    });
    expect(outcome?.additionalContext).toEqual(['saw the interrupt']);
  });

  it("leaves a local attempt's post hooks what remains of its start-to-close timeout, less a margin", () => {
    // A Read under the default local bound (1 s budget + 15 s) that returned 200 ms after its attempt began.
    expect(localPostHookBoundMs(1_000, 16_000, 1_200)).toBe(12_800);
    // Past the bound already: nothing left.
    expect(localPostHookBoundMs(1_000, 16_000, 20_000)).toBe(0);
  });
});
