/**
 * What a person can do from the console (split out of src/console/console-server.ts): approve, always allow or deny
 * a waiting call — as the logged-in person, signed with their key when the users file gives one, confirmed from the
 * session's decision log — and interrupt a running turn.
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { signApproval } from '../approvals/approval-signature.js';
import type { ApprovalDecisionRecord, ApprovalRequest, ApprovalSignal } from '../contracts/approval.js';
import { approvalDecisions, approvalSigningPayload } from '../contracts/approval.js';
import { isSessionApprover } from '../contracts/approvers-file.js';
import {
  activeTurnQuery,
  approvalDecisionsQuery,
  approvalSignal,
  interruptSignal,
  pendingApprovalsQuery,
} from '../contracts/messages.js';
import type { ActiveTurnView } from '../contracts/tool-result.js';
import type { ConsoleData } from './console-data.js';
import type { ConsoleUser } from './console-users.js';
import { HttpError } from './http-helpers.js';
import { describeDecision } from './render.js';
import type { Viewer } from './render.js';

/** How long a decision waits for the session to log what it did with it. */
const DECISION_CONFIRM_TIMEOUT_MS = 10_000;
/** How long a decision the console signs counts (its `expiresAt`): long enough for the signal to arrive. */
const SIGNED_DECISION_VALID_MS = 5 * 60_000;

const approvalRequestSchema = z.strictObject({
  sessionId: z.string().min(1).max(1_000),
  requestId: z.string().min(1).max(200),
  decision: z.enum(approvalDecisions),
  inputDigest: z.string().min(1).max(200),
  reason: z.string().max(2_000).optional(),
  // Accepted and ignored: who decides comes from the login, never from the page.
  by: z.unknown().optional(),
});
const interruptRequestSchema = z.strictObject({
  sessionId: z.string().min(1).max(1_000),
  reason: z.string().max(2_000).optional(),
});

export interface DecisionAnswer {
  outcome: 'accepted' | 'ignored' | 'unconfirmed';
  message: string;
  record?: ApprovalDecisionRecord;
}

export interface ConsoleActions {
  /** An `/api/approval` body, decided as `viewer`: what the session did with it, from its decision log. */
  decide(body: unknown, viewer: Viewer): Promise<DecisionAnswer>;
  /** An `/api/interrupt` body: interrupts the session's running turn, if any. */
  interrupt(body: unknown, viewer: Viewer): Promise<{ message: string }>;
}

export function createConsoleActions(options: {
  client: Client;
  data: ConsoleData;
  /** The users file's people by name, when the console has one (their signing keys). */
  users: ReadonlyMap<string, ConsoleUser> | undefined;
}): ConsoleActions {
  const { client, users } = options;
  const { data } = options;

  async function decide(body: unknown, viewer: Viewer): Promise<DecisionAnswer> {
    const parsed = approvalRequestSchema.safeParse(body);
    if (!parsed.success)
      throw new HttpError(
        400,
        `Invalid approval: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    const { sessionId, requestId, decision, inputDigest, reason } = parsed.data;
    const handle = client.workflow.getHandle(sessionId);
    // Hidden buttons are a courtesy; this is the check: a person who may not decide this request sends nothing.
    const request: ApprovalRequest | undefined = (
      await data.query(sessionId, () => handle.query(pendingApprovalsQuery), 'pendingApprovals')
    ).find((entry) => entry.requestId === requestId);
    if (
      request?.approvers !== undefined &&
      !isSessionApprover({ name: viewer.name, sessionApprovers: request.approvers, groups: viewer.groups })
    ) {
      throw new HttpError(
        403,
        `${viewer.name} is not one of this request's approvers (${request.approvers.join(', ') || 'none'}).`,
      );
    }
    const signal: ApprovalSignal = {
      requestId,
      decision,
      inputDigest,
      by: viewer.name,
      ...(reason === undefined || reason === '' ? {} : { reason }),
    };
    const signingKey = users?.get(viewer.name)?.signingKeyPem;
    if (signingKey !== undefined) {
      signal.expiresAt = new Date(Date.now() + SIGNED_DECISION_VALID_MS).toISOString();
      signal.signature = signApproval(approvalSigningPayload(sessionId, signal), signingKey);
    }
    const seen = async (): Promise<ApprovalDecisionRecord[]> =>
      (await data.query(sessionId, () => handle.query(approvalDecisionsQuery), 'approvalDecisions')).filter(
        (record) => record.requestId === requestId,
      );
    const before = (await seen()).length;
    await handle.signal(approvalSignal, signal);
    // The signal is delivered; only the session's decision log says whether it took effect.
    const deadline = Date.now() + DECISION_CONFIRM_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const records = await seen().catch(() => []);
      const record = records[before];
      if (record !== undefined) return { outcome: record.outcome, message: describeDecision(record), record };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return {
      outcome: 'unconfirmed',
      message: `Sent ${decision}, but the session has not logged it within ${DECISION_CONFIRM_TIMEOUT_MS / 1000} s (is its worker running?).`,
    };
  }

  async function interrupt(body: unknown, viewer: Viewer): Promise<{ message: string }> {
    const parsed = interruptRequestSchema.safeParse(body);
    if (!parsed.success) throw new HttpError(400, 'Invalid interrupt: needs { sessionId, reason? }');
    const handle = client.workflow.getHandle(parsed.data.sessionId);
    const active: ActiveTurnView | null = await data.query(
      parsed.data.sessionId,
      () => handle.query(activeTurnQuery),
      'activeTurn',
    );
    if (active === null) return { message: `Session ${parsed.data.sessionId} runs no turn: nothing to interrupt.` };
    await handle.signal(interruptSignal, {
      reason: parsed.data.reason ?? `interrupted from the console by ${viewer.name}`,
    });
    return { message: `Interrupt sent to turn ${active.turnId} of ${parsed.data.sessionId}.` };
  }

  return { decide, interrupt };
}
