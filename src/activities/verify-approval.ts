import type { VerifyApprovalInput, VerifyApprovalResult } from '../contracts/pipeline.js';
import { loadApproversFile, policySigningPayload, verifyApprovalSignature } from '../approvals/approval-signature.js';

/**
 * The `verifyApproval` activity: reads the approvers file on each use (so a removed approver stops counting at once,
 * without a worker restart) and returns only the verdict, which history records: replay never checks a signature
 * again, and no key enters history. An unreadable file is no verdict: the activity fails and the approval is not
 * taken. A signed `setPolicy` comes as its change: the digest is computed here, where hashing is allowed, and
 * returned with the verdict.
 */
export function createVerifyApproval(options: {
  approversFile?: string;
}): (input: VerifyApprovalInput) => Promise<VerifyApprovalResult> {
  return async (input) => {
    const approvers = options.approversFile === undefined ? undefined : await loadApproversFile(options.approversFile);
    const payload = input.policyChange === undefined ? input.payload : policySigningPayload(input.policyChange);
    const verdict = verifyApprovalSignature({
      payload,
      signature: input.signature,
      approvers,
      sessionApprovers: input.sessionApprovers,
    });
    return 'policyDigest' in payload ? { ...verdict, policyDigest: payload.policyDigest } : verdict;
  };
}
