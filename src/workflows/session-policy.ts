import { parseRule, parseRules } from '../contracts/permission-rules.js';
import type { ParsedRule, ParsedRules } from '../contracts/permission-rules.js';
import type { SessionPolicy, SetPolicyRequest } from '../contracts/policy.js';
import type { CallLimit, PermissionMode, PermissionRules, SessionOptions } from '../contracts/session.js';

export type { ParsedRules };

/** Turns' limit counts remembered at once (a turn's counts matter only while it runs). */
const TURN_COUNTS_RETAINED = 20;
/** Signatures of applied signed `setPolicy` changes remembered, so a captured one cannot be applied again. */
const APPLIED_SIGNATURES_RETAINED = 200;

/** What continue-as-new carries of the policy: the session tier when `setPolicy` changed it, and session-wide counts. */
export interface CarriedPolicy {
  policy?: SessionPolicy;
  /** Calls counted against each `limits` entry with `per: 'session'`, by position in `limits`. */
  limitCounts?: number[];
  /** Signatures of the signed `setPolicy` changes applied so far (newest last, bounded): each applies once. */
  appliedSignatures?: string[];
}

/**
 * The session's own policy tier (rules and permission mode, versioned), its shadow rules and its count limits
 * (docs/SEMANTICS.md, Policy). Version 1 is the start options; each `setPolicy` adds one. Counts are workflow state,
 * taken when a call is let through its permission check, so calls still running count and replay counts the same.
 */
export class PolicyState {
  #policy: SessionPolicy;
  #rules: ParsedRules;
  readonly shadow: ParsedRules | undefined;
  readonly limits: ReadonlyArray<{ limit: CallLimit; rule: ParsedRule | undefined }>;
  readonly #sessionCounts: number[];
  readonly #turnCounts = new Map<string, number[]>();
  readonly #appliedSignatures: string[];
  /** The first start-input rule (rules, shadow rules, limits) that does not parse. */
  readonly ruleError: string | undefined;

  constructor(options: SessionOptions, carried: CarriedPolicy | undefined) {
    let ruleError: string | undefined;
    const onError = (message: string): void => {
      ruleError ??= message;
    };
    this.#policy = carried?.policy ?? {
      version: 1,
      rules: options.rules ?? {},
      ...(options.permissionMode === undefined ? {} : { permissionMode: options.permissionMode }),
    };
    this.#rules = parseRules(this.#policy.rules, onError);
    this.shadow = options.shadowRules === undefined ? undefined : parseRules(options.shadowRules, onError);
    this.limits = (options.limits ?? []).map((limit) => {
      try {
        return { limit, rule: parseRule(limit.rule) };
      } catch (error) {
        onError((error as Error).message);
        return { limit, rule: undefined };
      }
    });
    this.#sessionCounts = this.limits.map((_, index) => carried?.limitCounts?.[index] ?? 0);
    this.#appliedSignatures = [...(carried?.appliedSignatures ?? [])];
    this.ruleError = ruleError;
  }

  get version(): number {
    return this.#policy.version;
  }

  get rules(): ParsedRules {
    return this.#rules;
  }

  /** The session's rules as given (for the activities' path checks). */
  get ruleTexts(): PermissionRules {
    return this.#policy.rules;
  }

  get permissionMode(): PermissionMode {
    return this.#policy.permissionMode ?? 'default';
  }

  /** Whether a signed `setPolicy` with this signature was applied already (a signed change applies once). */
  applied(signature: string): boolean {
    return this.#appliedSignatures.includes(signature);
  }

  /**
   * Applies a validated (and, where the session requires it, verified) `setPolicy` request: each rule list given
   * replaces the session's list; returns the new version. Its signature, if any, is remembered as spent.
   */
  update(request: SetPolicyRequest): number {
    if (request.signature !== undefined) {
      this.#appliedSignatures.push(request.signature);
      if (this.#appliedSignatures.length > APPLIED_SIGNATURES_RETAINED) this.#appliedSignatures.shift();
    }
    const rules: PermissionRules = { ...this.#policy.rules, ...(request.rules ?? {}) };
    const permissionMode = request.permissionMode ?? this.#policy.permissionMode;
    this.#policy = {
      version: this.#policy.version + 1,
      rules,
      ...(permissionMode === undefined ? {} : { permissionMode }),
    };
    this.#rules = parseRules(rules, () => undefined);
    return this.#policy.version;
  }

  /**
   * Counts a call against every limit whose rule it matches, unless one of them is spent: then nothing is counted
   * and the reason names that limit. `matches` says whether a limit's rule matches the call.
   */
  takeLimits(turnId: string, matches: (rule: ParsedRule) => boolean): { taken: number[] } | { denied: string } {
    const turnCounts = this.#countsOfTurn(turnId);
    const taken: number[] = [];
    for (const [index, { limit, rule }] of this.limits.entries()) {
      if (rule === undefined || !matches(rule)) continue;
      const counts = limit.per === 'session' ? this.#sessionCounts : turnCounts;
      const used = counts[index] ?? 0;
      if (used >= limit.max) {
        return {
          denied: `Denied by the limit ${limit.rule} (at most ${limit.max} per ${limit.per}): ${used} matching call${used === 1 ? ' has' : 's have'} already run.`,
        };
      }
      taken.push(index);
    }
    for (const index of taken) {
      const counts = this.limits[index]?.limit.per === 'session' ? this.#sessionCounts : turnCounts;
      counts[index] = (counts[index] ?? 0) + 1;
    }
    return { taken };
  }

  /** Gives back what {@link takeLimits} counted, for a call that ended up not running (denied or cancelled while it waited). */
  returnLimits(turnId: string, taken: readonly number[]): void {
    const turnCounts = this.#countsOfTurn(turnId);
    for (const index of taken) {
      const counts = this.limits[index]?.limit.per === 'session' ? this.#sessionCounts : turnCounts;
      counts[index] = Math.max(0, (counts[index] ?? 0) - 1);
    }
  }

  #countsOfTurn(turnId: string): number[] {
    let counts = this.#turnCounts.get(turnId);
    if (counts === undefined) {
      counts = this.limits.map(() => 0);
      this.#turnCounts.set(turnId, counts);
      if (this.#turnCounts.size > TURN_COUNTS_RETAINED)
        this.#turnCounts.delete(this.#turnCounts.keys().next().value ?? '');
    }
    return counts;
  }

  carry(): CarriedPolicy {
    return {
      ...(this.#policy.version > 1 ? { policy: this.#policy } : {}),
      ...(this.#sessionCounts.some((count) => count > 0) ? { limitCounts: [...this.#sessionCounts] } : {}),
      ...(this.#appliedSignatures.length > 0 ? { appliedSignatures: [...this.#appliedSignatures] } : {}),
    };
  }
}
