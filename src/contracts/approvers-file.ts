import { z } from 'zod';

/** One approver in the approvers file: an Ed25519 public key (SPKI PEM) and the groups the approver belongs to. */
export const approverEntrySchema = z.strictObject({
  publicKey: z.string().includes('BEGIN PUBLIC KEY', {
    message: 'publicKey must be an Ed25519 public key in SPKI PEM form (-----BEGIN PUBLIC KEY-----)',
  }),
  groups: z.array(z.string().min(1)).optional(),
});
export type ApproverEntry = z.infer<typeof approverEntrySchema>;

/** The worker's approvers file (`SWITCHYARD_APPROVERS_FILE`): `{ "approvers": { "<name>": { publicKey, groups? } } }`. */
export const approversFileSchema = z.strictObject({
  approvers: z.record(z.string().min(1), approverEntrySchema),
});
export type ApproversFile = z.infer<typeof approversFileSchema>;

/** The prefix that names a group in `SessionOptions.approvers`. */
export const APPROVER_GROUP_PREFIX = 'group:';

/**
 * Whether `name` is one of a session's approvers: listed by name, or a member of a listed `group:<g>` (membership as
 * the approvers file says). Pure: the worker and the console answer the same.
 */
export function isSessionApprover(options: {
  name: string;
  sessionApprovers: readonly string[];
  groups: readonly string[];
}): boolean {
  const { name, sessionApprovers, groups } = options;
  return sessionApprovers.some((entry) =>
    entry.startsWith(APPROVER_GROUP_PREFIX)
      ? groups.includes(entry.slice(APPROVER_GROUP_PREFIX.length))
      : entry === name,
  );
}
