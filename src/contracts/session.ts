// The schemas here sit behind `sessionSchemas()` instead of being exported: see src/contracts/schemas.ts.
import { z } from 'zod';
import { allowedDomainProblem } from './allowed-domains.js';
import { SESSION_LABEL_MAX_CHARS } from './defaults.js';
import { clientToolsSchemas } from './client-tools.js';

export const permissionModes = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;
export type PermissionMode = (typeof permissionModes)[number];

const permissionRulesSchema = z.strictObject({
  allow: z.array(z.string()).optional(),
  ask: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
});
export type PermissionRules = z.infer<typeof permissionRulesSchema>;

/** A count limit: at most `max` calls matching `rule` per session or per turn. */
const callLimitSchema = z.strictObject({
  rule: z.string().min(1),
  max: z.number().int().min(0),
  per: z.enum(['session', 'turn']),
});
export type CallLimit = z.infer<typeof callLimitSchema>;
export const sandboxModes = ['auto', 'required', 'off'] as const;
export type SandboxMode = (typeof sandboxModes)[number];

/**
 * The OS sandbox of every process a session's calls start (Bash, background tasks); see SECURITY.md and
 * `src/tools/sandbox/`. Paths are absolute, `~/…`, or relative to cwd; `denyRead` takes the patterns of `Read(...)` rules.
 */
const sandboxOptionsSchema = z.strictObject({
  /** `auto` (default; worker env `SWITCHYARD_SANDBOX`): sandbox where the worker can, run unsandboxed (loudly) where it cannot; `required`: a call that cannot be sandboxed fails with `sandbox_unavailable`; `off`: no sandbox. */
  mode: z.enum(sandboxModes).optional(),
  /**
   * No network at all unless hosts are listed here (`example.com`, `*.example.com`, `host:port`, `[::1]:8080`): then
   * only those, through a proxy. A host that resolves to a loopback, private, link-local or the worker's own address
   * is reached only on a port written with it (`localhost:8080`); see src/contracts/allowed-domains.ts.
   */
  network: z
    .strictObject({
      allowedDomains: z
        .array(
          z.string().superRefine((entry, context) => {
            const problem = allowedDomainProblem(entry);
            if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
          }),
        )
        .optional(),
    })
    .optional(),
  /** More paths (or `Read(...)` patterns) the sandbox cannot read, beside the credential folders and `Read(...)` deny rules. */
  denyRead: z.array(z.string().min(1)).optional(),
  /** More paths writable inside the sandbox, beside cwd and its private /tmp. */
  allowWrite: z.array(z.string().min(1)).optional(),
  /**
   * Bash calls that would ask only by default (no ask or deny rule matches, not a protected path) run without asking,
   * because they run sandboxed; such calls then never run unsandboxed (as under `required`). Default false.
   */
  autoAllowBash: z.boolean().optional(),
});
export type SandboxOptions = z.infer<typeof sandboxOptionsSchema>;

/** Start input of the `toolSession` workflow (wire contract v1). */
const sessionOptionsSchema = z.object({
  /** Defaults to the workflow id. */
  sessionId: z.string().min(1).optional(),
  /** Working directory of the session's tools; defaults to the worker's working directory. */
  cwd: z.string().min(1).optional(),
  /** Default `default`. */
  permissionMode: z.enum(permissionModes).optional(),
  rules: permissionRulesSchema.optional(),
  /** Largest concurrent group; default 10 (`SWITCHYARD_MAX_TOOL_CONCURRENCY` on the worker). */
  maxConcurrency: z.number().int().min(1).max(100).optional(),
  /** Deny an unanswered approval after this long; default: wait forever. */
  approvalTimeoutMs: z.number().int().positive().optional(),
  /** Per-turn aggregate budget of all results' model content; default 200,000 characters. */
  aggregateBudgetChars: z.number().int().positive().optional(),
  /** How soon a lost worker is noticed (heartbeat timeout of tool activities); default 10000. */
  heartbeatTimeoutMs: z.number().int().min(1_000).optional(),
  /**
   * Command hooks for this session, in Claude Code's settings shape (`{ PreToolUse: [{ matcher, hooks: [{ type:
   * 'command', command, timeout }] }] }`); they run after the user-level and project settings files' hooks.
   */
  hooks: z.record(z.string(), z.unknown()).optional(),
  /**
   * Wire contract v1.1: load command hooks from the settings files inside `cwd` (`.switchyard/settings.json`,
   * `.claude/settings.json`, `.claude/settings.local.json`); default false, because the model can write those files
   * and a cloned repository can ship them. Set it from the agent builder's own client, never from model output.
   * The worker's `SWITCHYARD_TRUSTED_WORKSPACES` (a `:`-separated path list) trusts workspaces in or under its paths too.
   */
  trustWorkspaceSettings: z.boolean().optional(),
  /** Continue as new after this many events in one run even if Temporal has not suggested it. */
  continueAsNewAfterEvents: z.number().int().positive().optional(),
  /**
   * Scale-out: run every activity of this session (Plan, Prepare, tool calls, hooks) on this task queue, served by
   * the tool workers that own the session's workspace (`createSwitchyardWorker({ role: 'tools' })`); workflow tasks
   * stay on the session's own queue and may run on any worker. Default: the session's own queue, with Plan and
   * Prepare as local activities of the workflow's worker.
   */
  toolTaskQueue: z.string().min(1).optional(),
  /**
   * How long Plan (lookup, input parse and grouping of a turn's calls) may take per attempt; default 60000. Preparing
   * the first group (its PreToolUse hooks) is not bound by it: that has Prepare's limit.
   */
  planTimeoutMs: z.number().int().min(1_000).optional(),
  /** Most calls one turn may carry; more is rejected by the update validator. Default 256 (`DEFAULT_MAX_CALLS_PER_TURN`). */
  maxCallsPerTurn: z.number().int().min(1).max(10_000).optional(),
  /** The OS sandbox of the processes the session's calls start (see `sandboxOptionsSchema`). Default `{ mode: 'auto' }`. */
  sandbox: sandboxOptionsSchema.optional(),
  /**
   * Who may decide this session's approvals: approver names, or `group:<g>` for every approver in that group, as the
   * worker's approvers file (`SWITCHYARD_APPROVERS_FILE`) lists them. When set, only an `approval` signal signed by one
   * of them (and not expired) is taken; an empty list lets nobody approve. Default: anyone who can signal decides.
   */
  approvers: z.array(z.string().min(1).max(200)).max(100).optional(),
  /**
   * Tools the client runs itself: their calls go through validation, hooks, rules and approval, then park (event
   * `ClientToolRequested`, query `pendingClientCalls`) until the update `submitToolResult` answers them. A worker tool
   * of the same name wins over a client tool.
   */
  clientTools: z.array(clientToolsSchemas().spec).max(128).optional(),
  /** A parked client call not answered within this long ends as an error; default: wait until answered or interrupted. */
  clientToolTimeoutMs: z.number().int().positive().optional(),
  /**
   * Rules evaluated beside `rules` and never enforced: where they would decide a call differently, a
   * `PolicyShadowDecision` event says so (`switchyard policy diff`).
   */
  shadowRules: permissionRulesSchema.optional(),
  /** At most `max` calls matching `rule` per session or per turn; the next is denied. Calls still running count. */
  limits: z.array(callLimitSchema).max(100).optional(),
  /** Edit or Write of an existing file the session has not read (or written) since it last changed fails. Default false. */
  readBeforeEdit: z.boolean().optional(),
  /** Name of an approval evaluator registered on the worker: it decides waiting calls beside the human. */
  approvalEvaluator: z.string().min(1).optional(),
  /**
   * v1.3: a human name for the session ("Fix the login bug"), shown by `switchyard sessions`, the console and the
   * Web UI summary. At most `SESSION_LABEL_MAX_CHARS` characters, no control characters (no line breaks).
   */
  label: z
    .string()
    .min(1)
    .max(SESSION_LABEL_MAX_CHARS)
    .regex(/^[^\u0000-\u001f\u007f]*$/, 'a label has no control characters (no line breaks or tabs)')
    .optional(),
});
export type SessionOptions = z.infer<typeof sessionOptionsSchema>;

const schemas = {
  permissionRules: permissionRulesSchema,
  callLimit: callLimitSchema,
  sandboxOptions: sandboxOptionsSchema,
  options: sessionOptionsSchema,
};

/** This module's schemas: the start options of `toolSession` and their parts. */
export function sessionSchemas(): typeof schemas {
  return schemas;
}
