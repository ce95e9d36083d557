import type { ApprovalVerdict } from '../contracts/approval.js';
import type { VerifyApprovalInput } from '../contracts/pipeline.js';
import { loadApproversFile, verifyApprovalSignature } from './approval-signature.js';

/**
 * The `verifyApproval` activity: reads the approvers file on each use (so a removed approver stops counting at once,
 * without a worker restart) and returns only the verdict, which history records: replay never checks a signature
 * again, and no key enters history. An unreadable file is no verdict: the activity fails and the approval is not
 * taken.
 */
export function createVerifyApproval(options: {
  approversFile?: string;
}): (input: VerifyApprovalInput) => Promise<ApprovalVerdict> {
  return async (input) => {
    const approvers = options.approversFile === undefined ? undefined : await loadApproversFile(options.approversFile);
    return verifyApprovalSignature({
      payload: input.payload,
      signature: input.signature,
      approvers,
      sessionApprovers: input.sessionApprovers,
    });
  };
}
