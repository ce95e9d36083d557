import { DEFAULT_TOOL_TIMEOUT_MS } from '../contracts/defaults.js';
import type { Tool } from '../tools/define-tool.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The tool's own deadline for this input (`resolveBudgetMs`), when it gives a usable one. */
function budgetForInput(policy: Tool['timeout'], input: unknown): number | undefined {
  if (policy?.resolveBudgetMs === undefined) return undefined;
  try {
    const budgetMs = policy.resolveBudgetMs(input);
    return typeof budgetMs === 'number' && Number.isFinite(budgetMs) && budgetMs > 0 ? budgetMs : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The call's deadline in ms (docs/SEMANTICS.md, Timeouts and the deadline): `kind: 'none'` → none; else the tool's
 * deadline for this input (`resolveBudgetMs`); else, when the tool allows it, the input's `timeout_ms` or `timeout`;
 * else the tool's default; else the executor default; capped at `maxMs`; plus `cleanupGraceMs`; never below 1 ms.
 */
export function resolveTimeoutMs(
  tool: Pick<Tool, 'timeout'>,
  input: unknown,
  defaultTimeoutMs: number = DEFAULT_TOOL_TIMEOUT_MS,
): number | undefined {
  const policy = tool.timeout;
  if (policy?.kind === 'none') return undefined;
  const defaultMs = policy?.defaultMs ?? defaultTimeoutMs;
  const override =
    policy?.allowCallOverride && isRecord(input)
      ? typeof input.timeout_ms === 'number'
        ? input.timeout_ms
        : typeof input.timeout === 'number'
          ? input.timeout
          : undefined
      : undefined;
  const requestedMs = budgetForInput(policy, input) ?? override ?? defaultMs;
  const cappedMs = policy?.maxMs === undefined ? requestedMs : Math.min(requestedMs, policy.maxMs);
  const cleanupGraceMs = Math.max(0, Math.trunc(policy?.cleanupGraceMs ?? 0));
  return Math.max(1, Math.trunc(cappedMs)) + cleanupGraceMs;
}
