import type { CommandFacts, CommandPartFacts, PermissionFacts, ReadyCallPlan } from './call-plan.js';
import type { PermissionMode } from './session.js';
import type { ParsedRule, ReadPathFindings, RuleSubject } from './permission-rules.js';
import { checkReadPaths, findMatchingRule, isPrefixRule, ruleCoversTool, ruleMatches } from './permission-rules.js';

import type { HookPermissionDecision } from './hook-decisions.js';

export type { HookPermissionDecision };

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
  /**
   * The operator's rules (the worker's policy file), a tier above `rules`: they join the session's lists, so their
   * deny and ask win over any session allow, and their ask holds even in `bypassPermissions` mode.
   */
  operator?: { allow: readonly ParsedRule[]; ask: readonly ParsedRule[]; deny: readonly ParsedRule[] };
}

/** The rules a call is judged by: the session's tier as it stands, its remembered approvals, the operator's tier. */
export interface CallRules {
  mode: PermissionMode;
  rules: PermissionInput['rules'];
  remembered: readonly ParsedRule[];
  operator?: PermissionInput['operator'];
}

/** The decision chain's input for a prepared call in the session's cwd under `rules`. */
export function callPermissionInput(plan: ReadyCallPlan, cwd: string, rules: CallRules): PermissionInput {
  return {
    subject: {
      toolName: plan.toolName,
      contentKind: plan.ruleKind,
      cwd,
      ...(plan.ruleContent === undefined ? {} : { content: plan.ruleContent }),
    },
    mode: rules.mode,
    rules: rules.rules,
    remembered: rules.remembered,
    readOnly: plan.flags.declaredReadOnly,
    editsInsideCwd: plan.editsInsideCwd,
    alwaysAsk: plan.alwaysAsk,
    ...(plan.hook?.decision === undefined
      ? {}
      : {
          hook: {
            decision: plan.hook.decision,
            ...(plan.hook.reason === undefined ? {} : { reason: plan.hook.reason }),
          },
        }),
    ...(plan.approval?.narrowToAllow === true ? { toolNarrowedToAllow: true } : {}),
    ...(plan.permission === undefined ? {} : { facts: plan.permission }),
    ...(rules.operator === undefined ? {} : { operator: rules.operator }),
  };
}

/**
 * The permission decision chain (docs/SEMANTICS.md, Permissions), deny wins throughout:
 * 1. a deny rule, then a hook's deny, then the tool's `deny` fact, deny;
 * 2. `plan` mode denies anything that is not read-only; `bypassPermissions` allows the rest;
 * 3. an explicit ask rule, the tool's `alwaysAsk` or a `strongAsk` fact asks (a strong ask: no hook allow, remembered allow or
 *    `prepareApproval` removes it);
 * 4. an allow rule, then a remembered `allow_always`, allow;
 * 5. the mode: read-only calls are allowed; `acceptEdits` allows file edits inside cwd; everything else asks
 *    (a default ask, which a hook's allow or the tool's `prepareApproval` may turn into allow);
 * 6. a hook's ask turns an allow into an ask;
 * 7. `dontAsk`: whatever would still ask is denied.
 *
 * A shell command (`facts.commands`) is judged part by part: a deny (ask) rule matching any of its simple commands,
 * or any other spelling of them, denies (asks); it is allowed by rules only when every part is allowed by a rule, a
 * remembered approval or by being read-only, or when a whole-tool rule or the exact command is allowed; a command
 * that is not a plain list of simple commands is allowed by nothing else. Read-only means every part is read-only.
 * `facts.readPaths` (one read confinement for every tool): a `Read(...)` deny (ask) rule that reaches one denies
 * (asks), and a read outside cwd that no `Read(...)` allow rule names is not allowed for being read-only.
 */
export function decidePermission(given: PermissionInput): PermissionDecision {
  const input = withOperatorRules(given);
  const { subject, mode, hook } = input;
  const reads = readFindings(input);
  const denied = denyReason(input, reads);
  if (denied !== undefined) return { behavior: 'deny', source: 'rule', reason: denied };
  if (hook?.decision === 'deny')
    return { behavior: 'deny', source: 'hook', reason: hook.reason ?? 'Blocked by PreToolUse hook' };
  if (input.facts?.deny !== undefined) return { behavior: 'deny', source: 'tool', reason: input.facts.deny.reason };
  if (mode === 'plan' && !isReadOnly(input)) {
    return {
      behavior: 'deny',
      source: 'mode',
      reason: `${subject.toolName} was denied: the session is in plan mode, which allows only read-only tools.`,
    };
  }
  if (mode === 'bypassPermissions') {
    const operatorAsk = given.operator === undefined ? undefined : findRuleForAnySpelling(given.operator.ask, input);
    if (operatorAsk !== undefined)
      return { behavior: 'ask', source: 'rule', reason: `The rule ${operatorAsk.rule.source} requires approval.` };
    return { behavior: 'allow', source: 'mode', reason: 'bypassPermissions mode' };
  }

  let decision = baseDecision(input, reads);
  if (decision.behavior === 'allow' && hook?.decision === 'ask') {
    decision = { behavior: 'ask', source: 'hook', reason: hook.reason ?? 'A PreToolUse hook asked for confirmation.' };
  }
  if (decision.behavior === 'ask' && mode === 'dontAsk') {
    return {
      behavior: 'deny',
      source: 'mode',
      reason: `${subject.toolName} needs approval, but the session's permission mode is dontAsk, so it was denied.`,
    };
  }
  return decision;
}

/** The session's rules joined with the operator's (operator rules first, so a reason names them). */
function withOperatorRules(input: PermissionInput): PermissionInput {
  const { operator, rules } = input;
  if (operator === undefined) return input;
  return {
    ...input,
    rules: {
      allow: [...operator.allow, ...rules.allow],
      ask: [...operator.ask, ...rules.ask],
      deny: [...operator.deny, ...rules.deny],
    },
  };
}

/** Whether a rule matches the call itself or, for a shell command, any of its spellings (what limits count). */
export function ruleMatchesCall(rule: ParsedRule, input: Pick<PermissionInput, 'subject' | 'facts'>): boolean {
  return findRuleForAnySpelling([rule], input) !== undefined;
}

function readFindings(input: PermissionInput): ReadPathFindings {
  const readPaths = input.facts?.readPaths ?? [];
  return readPaths.length === 0 ? {} : checkReadPaths({ readPaths, rules: input.rules, cwd: input.subject.cwd });
}

/** The call is read-only: for a shell command, every one of its simple commands (and it is a plain list). */
function isReadOnly(input: PermissionInput): boolean {
  const commands = input.facts?.commands;
  if (commands === undefined) return input.readOnly;
  return commands.parsed && commands.parts.every((part) => part.readOnly);
}

/** Every spelling of a shell command that deny and ask rules must see. */
function spellingsOf(commands: CommandFacts): string[] {
  return [...commands.parts.map((part) => part.content), ...commands.otherSpellings];
}

/** A rule matching the real path a file tool's path leads to (`PermissionFacts.realPath`), if any. */
function realPathRule(
  rules: readonly ParsedRule[],
  input: PermissionInput,
  options: { beneath?: boolean } = {},
): ParsedRule | undefined {
  const realPath = input.facts?.realPath;
  if (realPath === undefined || realPath === input.subject.content) return undefined;
  return findMatchingRule(rules, { ...input.subject, content: realPath }, options);
}

/** An allow rule (or remembered approval) for a file tool: it must match the path as written and the real path. */
function findAllowRule(rules: readonly ParsedRule[], input: PermissionInput): ParsedRule | undefined {
  const rule = findMatchingRule(rules, input.subject);
  const realPath = input.facts?.realPath;
  if (rule === undefined || realPath === undefined || realPath === input.subject.content) return rule;
  return findMatchingRule(rules, { ...input.subject, content: realPath }) === undefined ? undefined : rule;
}

/** The first rule matching the call itself or, for a shell command, any of its spellings. */
function findRuleForAnySpelling(
  rules: readonly ParsedRule[],
  input: Pick<PermissionInput, 'subject' | 'facts'>,
  options: { beneath?: boolean } = {},
): { rule: ParsedRule; spelling?: string } | undefined {
  const whole = findMatchingRule(rules, input.subject, options);
  if (whole !== undefined) return { rule: whole };
  const commands = input.facts?.commands;
  if (commands === undefined) return undefined;
  for (const spelling of spellingsOf(commands)) {
    const rule = findMatchingRule(rules, { ...input.subject, content: spelling });
    if (rule !== undefined) return { rule, spelling };
  }
  return undefined;
}

function denyReason(input: PermissionInput, reads: ReadPathFindings): string | undefined {
  const { toolName } = input.subject;
  const match = findRuleForAnySpelling(input.rules.deny, input, { beneath: true });
  if (match !== undefined) {
    const part = match.spelling === undefined ? '' : ` (it matches \`${match.spelling}\`)`;
    return `Permission to use ${toolName} was denied by the rule ${match.rule.source}${part}.`;
  }
  const realMatch = realPathRule(input.rules.deny, input, { beneath: true });
  if (realMatch !== undefined)
    return `Permission to use ${toolName} was denied by the rule ${realMatch.source}: ${input.subject.content ?? ''} leads to ${input.facts?.realPath ?? ''}.`;
  const unanalysed = input.facts?.commands?.parsed === false ? input.facts.commands.unanalysed : undefined;
  if (unanalysed !== undefined) {
    const rule = input.rules.deny.find(
      (candidate) =>
        candidate.toolName === 'Read' ||
        (ruleCoversTool(candidate.toolName, toolName) && candidate.content !== undefined),
    );
    if (rule !== undefined) {
      return `Permission to use ${toolName} was denied: the rule ${rule.source} is in force, and the command has ${unanalysed}, which no rule can be checked against. Write the command out plainly.`;
    }
  }
  if (reads.denied !== undefined) {
    const { rule, readPath } = reads.denied;
    if (!readPath.startsWith('/')) {
      return `Permission to use ${toolName} was denied: it reads ${readPath}, which cannot be located, so the rule ${rule.source} cannot be checked. Name the files to read.`;
    }
    return /[*?[]/.test(readPath)
      ? `Permission to use ${toolName} was denied: it may read ${readPath}, which includes what the rule ${rule.source} denies. Name the files to read, or use the Read or Grep tools, which skip denied files.`
      : `Permission to use ${toolName} was denied: it reads ${readPath}, which the rule ${rule.source} denies.`;
  }
  return undefined;
}

/** A whole-tool rule, or (for a shell command) an exact rule naming the whole command as given. */
function findWholeCommandRule(rules: readonly ParsedRule[], subject: RuleSubject): ParsedRule | undefined {
  return rules.find(
    (rule) =>
      ruleCoversTool(rule.toolName, subject.toolName) &&
      (rule.content === undefined || (!isPrefixRule(rule) && rule.content === subject.content)),
  );
}

/** The rule allowing one simple command: a command that runs another (`sudo`, `bash -c`) only by an exact rule. */
function findPartRule(
  rules: readonly ParsedRule[],
  subject: RuleSubject,
  part: CommandPartFacts,
): ParsedRule | undefined {
  return rules.find((rule) => {
    if (part.runner === true && rule.content !== undefined && (isPrefixRule(rule) || rule.content !== part.content))
      return false;
    return ruleMatches(rule, { ...subject, content: part.content });
  });
}

/** How a plain shell command fares part by part: allowed (with the strongest source used) or the parts that need approval. */
function judgeParts(
  input: PermissionInput,
  commands: CommandFacts,
  reads: ReadPathFindings,
): { allowed: PermissionDecision } | { unallowed: string[] } {
  const unallowed: string[] = [];
  let source: PermissionSource = 'mode';
  let rule: ParsedRule | undefined;
  for (const part of commands.parts) {
    if (part.readOnly && reads.unconfined === undefined) continue;
    const allowRule = findPartRule(input.rules.allow, input.subject, part);
    if (allowRule !== undefined) {
      rule ??= allowRule;
      if (source === 'mode') source = 'rule';
      continue;
    }
    const remembered = findPartRule(input.remembered, input.subject, part);
    if (remembered !== undefined) {
      rule ??= remembered;
      source = 'remembered';
      continue;
    }
    unallowed.push(part.content);
  }
  if (unallowed.length > 0) return { unallowed };
  const reason =
    source === 'mode'
      ? 'Read-only commands need no approval.'
      : `Allowed part by part: every command is read-only or allowed by a rule (such as ${rule?.source ?? 'an allow rule'}).`;
  return { allowed: { behavior: 'allow', source, reason } };
}

function baseDecision(input: PermissionInput, reads: ReadPathFindings): PermissionDecision {
  const { subject, rules, hook } = input;
  const ask = findRuleForAnySpelling(rules.ask, input, { beneath: true });
  if (ask !== undefined) {
    const part = ask.spelling === undefined ? '' : ` (it matches \`${ask.spelling}\`)`;
    return { behavior: 'ask', source: 'rule', reason: `The rule ${ask.rule.source} requires approval${part}.` };
  }
  const realAsk = realPathRule(rules.ask, input, { beneath: true });
  if (realAsk !== undefined)
    return {
      behavior: 'ask',
      source: 'rule',
      reason: `The rule ${realAsk.source} requires approval: ${subject.content ?? ''} leads to ${input.facts?.realPath ?? ''}.`,
    };
  if (reads.asked !== undefined) {
    return {
      behavior: 'ask',
      source: 'rule',
      reason: `The rule ${reads.asked.rule.source} requires approval (${subject.toolName} reads ${reads.asked.readPath}).`,
    };
  }
  if (input.alwaysAsk)
    return { behavior: 'ask', source: 'tool', reason: `${subject.toolName} always asks for approval.` };
  if (input.facts?.strongAsk !== undefined)
    return { behavior: 'ask', source: 'tool', reason: input.facts.strongAsk.reason };

  const commands = input.facts?.commands;
  let defaultReason = `${subject.toolName} is not read-only and needs approval.`;
  if (commands !== undefined) {
    // A shell command: whole-tool and exact rules first, then part by part (never for what is not a plain list).
    const allowRule = findWholeCommandRule(rules.allow, subject);
    if (allowRule !== undefined)
      return { behavior: 'allow', source: 'rule', reason: `Allowed by the rule ${allowRule.source}.` };
    const remembered = findWholeCommandRule(input.remembered, subject);
    if (remembered !== undefined)
      return {
        behavior: 'allow',
        source: 'remembered',
        reason: `Allowed by the remembered approval ${remembered.source}.`,
      };
    if (!commands.parsed) {
      defaultReason = `${subject.toolName} needs approval: the command cannot be checked against rules part by part (${commands.reason}).`;
    } else {
      const judged = judgeParts(input, commands, reads);
      if ('allowed' in judged) return judged.allowed;
      const outside =
        reads.unconfined === undefined ? '' : ` It reads ${reads.unconfined}, outside the working directory.`;
      defaultReason = `${subject.toolName} needs approval for ${judged.unallowed.map((content) => `\`${content}\``).join(', ')}.${outside}`;
    }
  } else {
    const allowRule = findAllowRule(rules.allow, input);
    if (allowRule !== undefined)
      return { behavior: 'allow', source: 'rule', reason: `Allowed by the rule ${allowRule.source}.` };
    const remembered = findAllowRule(input.remembered, input);
    if (remembered !== undefined)
      return {
        behavior: 'allow',
        source: 'remembered',
        reason: `Allowed by the remembered approval ${remembered.source}.`,
      };
    if (input.readOnly && reads.unconfined === undefined)
      return { behavior: 'allow', source: 'mode', reason: 'Read-only tools need no approval.' };
    if (input.readOnly)
      defaultReason = `${subject.toolName} reads ${reads.unconfined ?? ''}, outside the working directory, and needs approval.`;
  }
  if (input.mode === 'acceptEdits' && input.editsInsideCwd)
    return {
      behavior: 'allow',
      source: 'mode',
      reason: 'acceptEdits mode allows file edits inside the working directory.',
    };
  // A default ask: the weakest decision, which a hook's allow or the tool's prepareApproval may lift.
  if (hook?.decision === 'allow')
    return { behavior: 'allow', source: 'hook', reason: hook.reason ?? 'Allowed by a PreToolUse hook.' };
  if (input.toolNarrowedToAllow === true)
    return { behavior: 'allow', source: 'tool', reason: `${subject.toolName} found nothing that needs approval.` };
  return { behavior: 'ask', source: 'mode', reason: defaultReason };
}
