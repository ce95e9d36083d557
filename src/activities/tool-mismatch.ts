import { createHash } from 'node:crypto';
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { errorCodes } from '../contracts/tool-result.js';
import type { ToolRegistry } from '../tools/registry.js';

/**
 * Workers on one task queue must offer the same tools: any of them may plan a session's calls and any may run them.
 * Each worker's identity carries a fingerprint of its tool names (`… tools:<hash>`), so a worker that lacks a tool
 * can tell "the model invented it" (every worker on the queue has the same tools: `Tool not found`) from "another
 * worker has it" (a configuration mismatch: a retryable failure naming this worker and the tool).
 */
export const TOOLS_MARKER = ' tools:';

/** A short hash of every name and alias the registry answers to. */
export function toolsFingerprint(registry: ToolRegistry): string {
  const names = registry
    .list()
    .flatMap((tool) => [tool.name, ...(tool.aliases ?? [])])
    .sort();
  return createHash('sha256').update(names.join('\n')).digest('hex').slice(0, 12);
}

/** `pid@host switchyard tools:<fingerprint>`: Temporal's default identity plus the tool set. */
export function workerIdentity(registry: ToolRegistry): string {
  return `${process.pid}@${os.hostname()} switchyard${TOOLS_MARKER}${toolsFingerprint(registry)}`;
}

export const TOOL_NOT_ON_WORKER = 'ToolNotOnWorker';

/** Pollers seen this recently count as live (a long poll renews its access time at least once a minute). */
const LIVE_POLLER_MS = 3 * 60_000;

/**
 * Identities of the live workers on this activity's task queue (workflow and activity pollers) whose tool set differs
 * from `identity`'s. Empty when the server will not say: then nothing is known to be wrong.
 */
export async function workersWithOtherTools(identity: string): Promise<string[]> {
  const context = Context.current();
  const mine = identity.split(TOOLS_MARKER)[1];
  let service;
  try {
    service = context.client.workflowService;
  } catch {
    return [];
  }
  const others = new Set<string>();
  // TaskQueueType: 1 = workflow, 2 = activity (the proto enum's values).
  for (const taskQueueType of [1, 2]) {
    try {
      const response = await service.describeTaskQueue({
        namespace: context.info.namespace,
        taskQueue: { name: context.info.taskQueue },
        taskQueueType,
      });
      for (const poller of response.pollers ?? []) {
        const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
        if (seconds > 0 && Date.now() - seconds * 1_000 > LIVE_POLLER_MS) continue;
        const theirs = poller.identity?.split(TOOLS_MARKER)[1];
        if (poller.identity && poller.identity !== identity && theirs !== mine) others.add(poller.identity);
      }
    } catch {
      // No permission to describe the queue, or an old server: say nothing rather than guess.
    }
  }
  return [...others];
}

/** The failure for a call whose tool this worker lacks while other workers on the queue offer different tools. */
export function toolNotOnWorker(options: {
  toolNames: readonly string[];
  identity: string;
  others: readonly string[];
}): ApplicationFailure {
  const { toolNames, identity, others } = options;
  const taskQueue = Context.current().info.taskQueue;
  const tools = toolNames.map((name) => `"${name}"`).join(', ');
  const elsewhere =
    others.length === 0
      ? 'the worker that planned the call has it'
      : `other workers on it offer different tools (${others.join('; ')})`;
  return ApplicationFailure.retryable(
    `Worker ${identity} does not offer tool ${tools}, but ${elsewhere}: workers on task queue "${taskQueue}" must offer the same tools ` +
      '(load custom tools and MCP servers into every worker: switchyard worker --tools <module> --mcp-config <file>).',
    TOOL_NOT_ON_WORKER,
  );
}

/**
 * A call naming a tool this worker lacks is `Tool not found` only when every live worker on the queue offers the same
 * tools; otherwise the workers disagree, and this one must not answer for the others: fail (retryably) naming both.
 */
export async function failOnToolMismatch(options: {
  identity: string | undefined;
  plans: ReadonlyArray<{ kind: string; errorCode?: string; toolName: string }>;
  warn: (message: string, details: Record<string, unknown>) => void;
}): Promise<void> {
  const { identity } = options;
  const missing = options.plans
    .filter((plan) => plan.kind === 'rejected' && plan.errorCode === errorCodes.toolNotFound)
    .map((plan) => plan.toolName);
  if (identity === undefined || missing.length === 0) return;
  const others = await workersWithOtherTools(identity);
  if (others.length === 0) return;
  options.warn('a call names a tool this worker lacks while other workers on its task queue offer different tools', {
    tools: missing,
    identity,
    others,
  });
  throw toolNotOnWorker({ toolNames: missing, identity, others });
}
