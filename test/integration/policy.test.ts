import { access, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { allEvents, answer, eventsOfType, rejectionOf, waitForPendingApprovals } from '../support/session-probes.js';

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );
const bash = (id: string, command: string) => ({ id, name: 'Bash', input: { command } });

/** Policy that changes while a session runs, through real sessions with the real built-in tools. */
describe('session policy on a real server (real tools)', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await createHarness({ tools: builtinTools() });
  });
  afterAll(async () => harness.close());

  it('setPolicy adding Bash(touch:*) releases a waiting touch at once and holds for the next turn; a bad rule applies nothing', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd });
      const turn = session.executeTurn({ turnId: 't1', calls: [bash('c1', 'touch one.txt')] });
      await waitForPendingApprovals(session);

      expect(await rejectionOf(session.setPolicy({ rules: { allow: ['Bash(touch:*'] } }))).toContain(
        'Invalid permission rule',
      );
      const changed = await session.setPolicy({
        rules: { allow: ['Bash(touch:*)'] },
        reason: 'touch is harmless here',
        by: 'ops',
      });
      expect(changed).toEqual({ policyVersion: 2, released: ['c1'], denied: [] });
      const first = await turn;
      expect(first.results[0]).toMatchObject({ status: 'success' });
      expect(await exists(path.join(cwd, 'one.txt'))).toBe(true);
      expect(await session.pendingApprovals()).toEqual([]);

      const second = await session.executeTurn({ turnId: 't2', calls: [bash('c2', 'touch two.txt')] });
      expect(second.results[0]).toMatchObject({ status: 'success', timings: { permissionWaitMs: 0 } });

      // A stricter policy denies a waiting call at once.
      const third = session.executeTurn({ turnId: 't3', calls: [bash('c3', 'mkdir three')] });
      await waitForPendingApprovals(session);
      expect(await session.setPolicy({ rules: { deny: ['Bash(mkdir:*)'] }, by: 'ops' })).toEqual({
        policyVersion: 3,
        released: [],
        denied: ['c3'],
      });
      expect((await third).results[0]).toMatchObject({ status: 'denied' });
      expect((await third).results[0]?.modelContent).toContain('Bash(mkdir:*)');

      const events = await allEvents(session);
      expect(eventsOfType(events, 'PolicyChanged')).toMatchObject([
        { policyVersion: 2, by: 'ops', reason: 'touch is harmless here', released: ['c1'], denied: [] },
        { policyVersion: 3, released: [], denied: ['c3'] },
      ]);
      // Decisions a policy change makes are the policy's, never a bare name taken for a person.
      expect(eventsOfType(events, 'PermissionResolved')).toMatchObject([
        { callId: 'c1', source: 'policy', by: 'policy:ops', policyVersion: 2 },
      ]);
      expect(eventsOfType(events, 'PermissionDenied')).toMatchObject([
        { callId: 'c3', source: 'policy', policyVersion: 3 },
      ]);
      const decisions =
        await session.workflow.query<
          Array<{ callId?: string; by?: string; decision?: string; policyVersion?: number }>
        >('approvalDecisions');
      expect(decisions).toMatchObject([
        { callId: 'c1', by: 'policy:ops', decision: 'allow', policyVersion: 2 },
        { callId: 'c3', by: 'policy:ops', decision: 'deny', policyVersion: 3 },
      ]);
    });
  });

  it("a session's setPolicy cannot lift an operator's deny or ask, not even with bypassPermissions", async () => {
    const cwd = await scratchDir();
    await harness.withWorker(
      async () => {
        const session = await harness.startSession({ cwd, rules: { allow: ['Bash(touch:*)', 'Bash(mkdir:*)'] } });
        const denied = await session.executeTurn({ turnId: 't1', calls: [bash('c1', 'touch secret.txt')] });
        expect(denied.results[0]).toMatchObject({ status: 'denied' });
        expect(denied.results[0]?.modelContent).toContain("Bash(touch:*) (the operator's policy)");

        expect(
          await session.setPolicy({ rules: { allow: ['Bash'] }, permissionMode: 'bypassPermissions', by: 'the-model' }),
        ).toMatchObject({ policyVersion: 2 });
        const again = await session.executeTurn({ turnId: 't2', calls: [bash('c2', 'touch secret.txt')] });
        expect(again.results[0]).toMatchObject({ status: 'denied' });
        expect(await exists(path.join(cwd, 'secret.txt'))).toBe(false);

        const asking = session.executeTurn({ turnId: 't3', calls: [bash('c3', 'mkdir made')] });
        const [request] = await waitForPendingApprovals(session);
        expect(request?.reason).toContain("Bash(mkdir:*) (the operator's policy)");
        await answer(session, request!, 'allow');
        expect((await asking).results[0]).toMatchObject({ status: 'success' });
      },
      { operatorRules: { deny: ['Bash(touch:*)'], ask: ['Bash(mkdir:*)'] } },
    );
  });

  it('shadow rules produce PolicyShadowDecision events and enforce nothing', async () => {
    const cwd = await scratchDir();
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        rules: { allow: ['Bash(touch:*)'] },
        shadowRules: { deny: ['Bash(touch:*)'] },
      });
      const result = await session.executeTurn({
        turnId: 't1',
        calls: [bash('c1', 'touch shadowed.txt'), { id: 'r1', name: 'Glob', input: { pattern: '*' } }],
      });
      expect(result.results.map((entry) => entry.status)).toEqual(['success', 'success']);
      expect(await exists(path.join(cwd, 'shadowed.txt'))).toBe(true);
      const shadow = eventsOfType(await allEvents(session), 'PolicyShadowDecision');
      expect(shadow).toMatchObject([
        { callId: 'c1', toolName: 'Bash', enforced: 'allow', shadow: 'deny', policyVersion: 1 },
      ]);
      expect(shadow[0]?.shadowReason).toContain('Bash(touch:*)');
    });
  });

  it('limits deny the call past max, naming the limit: across turns, and within one concurrent group', async () => {
    const cwd = await scratchDir();
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
    await writeFile(path.join(cwd, 'b.txt'), 'b\n');
    await harness.withWorker(async () => {
      const session = await harness.startSession({
        cwd,
        rules: { allow: ['Bash(touch:*)'] },
        limits: [
          { rule: 'Bash(touch:*)', max: 1, per: 'session' },
          { rule: 'Read', max: 1, per: 'turn' },
        ],
      });
      const first = await session.executeTurn({ turnId: 't1', calls: [bash('c1', 'touch x.txt')] });
      expect(first.results[0]).toMatchObject({ status: 'success' });
      const second = await session.executeTurn({ turnId: 't2', calls: [bash('c2', 'touch y.txt')] });
      expect(second.results[0]).toMatchObject({ status: 'denied' });
      expect(second.results[0]?.modelContent).toContain('Denied by the limit Bash(touch:*) (at most 1 per session)');
      expect(await exists(path.join(cwd, 'y.txt'))).toBe(false);

      // Two Reads in one reply run as one concurrent group: the second is denied while the first still runs.
      const reads = await session.executeTurn({
        turnId: 't3',
        calls: [
          { id: 'r1', name: 'Read', input: { file_path: 'a.txt' } },
          { id: 'r2', name: 'Read', input: { file_path: 'b.txt' } },
        ],
      });
      const scheduled = eventsOfType(await allEvents(session), 'ToolCallScheduled').filter(
        (event) => event.turnId === 't3',
      );
      expect(scheduled[0]?.groups).toEqual([['r1', 'r2']]);
      expect(reads.results.map((entry) => entry.status)).toEqual(['success', 'denied']);
      expect(reads.results[1]?.modelContent).toContain('Denied by the limit Read (at most 1 per turn)');
      // Per turn: the next turn may read again.
      const next = await session.executeTurn({
        turnId: 't4',
        calls: [{ id: 'r3', name: 'Read', input: { file_path: 'b.txt' } }],
      });
      expect(next.results[0]).toMatchObject({ status: 'success' });
    });
  });

  it("readBeforeEdit refuses an unread Edit with Claude Code's text and allows it after a Read", async () => {
    const cwd = await scratchDir();
    const file = path.join(cwd, 'notes.txt');
    await writeFile(file, 'alpha\n');
    await harness.withWorker(async () => {
      const session = await harness.startSession({ cwd, readBeforeEdit: true, permissionMode: 'acceptEdits' });
      const notesEdit = { file_path: 'notes.txt', old_string: 'alpha', new_string: 'beta' };
      const edit = (id: string) => ({ id, name: 'Edit', input: notesEdit });
      const refused = await session.executeTurn({ turnId: 't1', calls: [edit('e1')] });
      expect(refused.results[0]).toMatchObject({ status: 'error', isError: true });
      expect(refused.results[0]?.modelContent).toContain(
        'File has not been read yet. Read it first before writing to it.',
      );
      expect(await readFile(file, 'utf8')).toBe('alpha\n');

      // Read then Edit in one reply, as a model sends them.
      const allowed = await session.executeTurn({
        turnId: 't2',
        calls: [{ id: 'r1', name: 'Read', input: { file_path: 'notes.txt' } }, edit('e2')],
      });
      expect(allowed.results.map((entry) => entry.status)).toEqual(['success', 'success']);
      expect(await readFile(file, 'utf8')).toBe('beta\n');

      // Changed behind the session's back: read it again first. A file the session wrote itself needs no Read.
      await new Promise((resolve) => setTimeout(resolve, 20));
      await writeFile(file, 'gamma\n');
      const stale = await session.executeTurn({
        turnId: 't3',
        calls: [
          { id: 'e3', name: 'Edit', input: { file_path: 'notes.txt', old_string: 'gamma', new_string: 'delta' } },
        ],
      });
      expect(stale.results[0]?.modelContent).toContain('File has not been read yet.');
      const written = await session.executeTurn({
        turnId: 't4',
        calls: [
          { id: 'w1', name: 'Write', input: { file_path: 'fresh.txt', content: 'one\n' } },
          { id: 'e4', name: 'Edit', input: { file_path: 'fresh.txt', old_string: 'one', new_string: 'two' } },
        ],
      });
      expect(written.results.map((entry) => entry.status)).toEqual(['success', 'success']);
      expect(await readFile(path.join(cwd, 'fresh.txt'), 'utf8')).toBe('two\n');
    });
  });
});
