import type { PermissionFacts } from '../contracts/call-plan.js';
import type { PermissionMode } from '../contracts/session.js';
import type { ParsedRule, RuleSubject } from '../contracts/permission-rules.js';
import { findMatchingRule } from '../contracts/permission-rules.js';

export type HookPermissionDecision = 'allow' | 'deny' | 'ask';

export type PermissionSource = 'rule' | 'mode' | 'hook' | 'remembered' | 'tool';

export type PermissionDecision =
  | { behavior: 'allow'; source: PermissionSource; reason: string }
  | { behavior: 'deny'; source: PermissionSource; reason: string }
  | { behavior: 'ask'; source: PermissionSource; reason: string };

export interface PermissionInput {
  subject: RuleSubject;
  mode: PermissionMode;
  rules: { allow: readonly ParsedRule[]; ask: readonly ParsedRule[]; deny: readonly ParsedRule[] };
  /** `allow_always` answers of this session. */
  remembered: readonly ParsedRule[];
  readOnly: boolean;
  /** The tool edits files and the target is inside cwd (what `acceptEdits` allows). */
  editsInsideCwd: boolean;
  alwaysAsk: boolean;
  /** The PreToolUse hooks' combined decision. */
  hook?: { decision: HookPermissionDecision; reason?: string };
  /** The tool's `prepareApproval` narrowed a default ask to allow. */
  toolNarrowedToAllow?: boolean;
  /** What the tool found about this call (`ToolDefinition.permissionFacts`). */
  facts?: PermissionFacts;
}

/**
 * The permission decision chain (seed 000 permission-flow, seed 001 §4.4.4), deny wins throughout:
 * 1. a deny rule, then a hook's deny, then the tool's `deny` fact, deny;
 * 2. `plan` mode denies anything that is not read-only; `bypassPermissions` allows the rest;
 * 3. an explicit ask rule, the tool's `alwaysAsk` or a `strongAsk` fact asks (a strong ask: no hook allow, remembered allow or
 *    `prepareApproval` removes it);
 * 4. an allow rule, then a remembered `allow_always`, allow;
 * 5. the mode: read-only calls are allowed; `acceptEdits` allows file edits inside cwd; everything else asks
 *    (a default ask, which a hook's allow or the tool's `prepareApproval` may turn into allow);
 * 6. a hook's ask turns an allow into an ask;
 * 7. `dontAsk`: whatever would still ask is denied.
 */
export function decidePermission(input: PermissionInput): PermissionDecision {
  const { subject, mode, rules, hook } = input;
  const denyRule = findMatchingRule(rules.deny, subject);
  if (denyRule !== undefined) return { behavior: 'deny', source: 'rule', reason: `Permission to use ${subject.toolName} was denied by the rule ${denyRule.source}.` };
  if (hook?.decision === 'deny') return { behavior: 'deny', source: 'hook', reason: hook.reason ?? 'Blocked by PreToolUse hook' };
  if (input.facts?.deny !== undefined) return { behavior: 'deny', source: 'tool', reason: input.facts.deny.reason };
  if (mode === 'plan' && !input.readOnly) {
    return { behavior: 'deny', source: 'mode', reason: `${subject.toolName} was denied: the session is in plan mode, which allows only read-only tools.` };
  }
  if (mode === 'bypassPermissions') return { behavior: 'allow', source: 'mode', reason: 'bypassPermissions mode' };

  let decision = baseDecision(input);
  if (decision.behavior === 'allow' && hook?.decision === 'ask') {
    decision = { behavior: 'ask', source: 'hook', reason: hook.reason ?? 'A PreToolUse hook asked for confirmation.' };
  }
  if (decision.behavior === 'ask' && mode === 'dontAsk') {
    return { behavior: 'deny', source: 'mode', reason: `${subject.toolName} needs approval, but the session's permission mode is dontAsk, so it was denied.` };
  }
  return decision;
}

function baseDecision(input: PermissionInput): PermissionDecision {
  const { subject, rules, hook } = input;
  const askRule = findMatchingRule(rules.ask, subject);
  if (askRule !== undefined) return { behavior: 'ask', source: 'rule', reason: `The rule ${askRule.source} requires approval.` };
  if (input.alwaysAsk) return { behavior: 'ask', source: 'tool', reason: `${subject.toolName} always asks for approval.` };
  if (input.facts?.strongAsk !== undefined) return { behavior: 'ask', source: 'tool', reason: input.facts.strongAsk.reason };
  const allowRule = findMatchingRule(rules.allow, subject);
  if (allowRule !== undefined) return { behavior: 'allow', source: 'rule', reason: `Allowed by the rule ${allowRule.source}.` };
  const remembered = findMatchingRule(input.remembered, subject);
  if (remembered !== undefined) return { behavior: 'allow', source: 'remembered', reason: `Allowed by the remembered approval ${remembered.source}.` };
  if (input.readOnly) return { behavior: 'allow', source: 'mode', reason: 'Read-only tools need no approval.' };
  if (input.mode === 'acceptEdits' && input.editsInsideCwd) return { behavior: 'allow', source: 'mode', reason: 'acceptEdits mode allows file edits inside the working directory.' };
  // A default ask: the weakest decision, which a hook's allow or the tool's prepareApproval may lift.
  if (hook?.decision === 'allow') return { behavior: 'allow', source: 'hook', reason: hook.reason ?? 'Allowed by a PreToolUse hook.' };
  if (input.toolNarrowedToAllow === true) return { behavior: 'allow', source: 'tool', reason: `${subject.toolName} found nothing that needs approval.` };
  return { behavior: 'ask', source: 'mode', reason: `${subject.toolName} is not read-only and needs approval.` };
}
