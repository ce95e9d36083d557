import { z } from 'zod';

export const approvalDecisions = ['allow', 'allow_always', 'deny'] as const;
export type ApprovalDecision = (typeof approvalDecisions)[number];

/** Payload of the `approval` signal. */
export const approvalSignalSchema = z.object({
  requestId: z.string().min(1),
  decision: z.enum(approvalDecisions),
  inputDigest: z.string().min(1),
  by: z.string().optional(),
  reason: z.string().optional(),
});
export type ApprovalSignal = z.infer<typeof approvalSignalSchema>;

/** A call waiting for a human (query `pendingApprovals`). */
export interface ApprovalRequest {
  requestId: string;
  turnId: string;
  callId: string;
  toolName: string;
  input: unknown;
  inputDigest: string;
  preview?: string;
  reason?: string;
  /** The rule an `allow_always` answer would remember, e.g. `Bash(npm test)`. */
  rememberRule?: string;
  /** ISO timestamp (workflow time). */
  requestedAt: string;
}
