import { WorkflowUpdateFailedError } from '@temporalio/client';
import { userNameFromEnv } from '../config/environment.js';
import { permissionModes } from '../contracts/session.js';
import type { PermissionMode, PermissionRules } from '../contracts/session.js';
import type { SessionEvent } from '../contracts/events.js';
import type { SetPolicyRequest } from '../contracts/policy.js';
import { invalidRule } from '../contracts/policy.js';
import { signingFromFlags } from './signing-flags.js';
import { ExitCode, UsageError, parseCommand, withClient, writeJson } from './common.js';
import { COMMAND_HELP } from './help.js';

/** `switchyard policy set|diff`. */
export async function policyCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'set') return policySet(rest);
  if (sub === 'diff') return policyDiff(rest);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(COMMAND_HELP.policy ?? '');
    return ExitCode.ok;
  }
  throw new UsageError(`policy has no subcommand "${sub}" (set or diff)`, 'policy');
}

const SET_OPTIONS = {
  session: { type: 'string' },
  allow: { type: 'string', multiple: true },
  ask: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  mode: { type: 'string' },
  reason: { type: 'string' },
  by: { type: 'string' },
  key: { type: 'string' },
  'expires-at': { type: 'string' },
} as const;

/** Whether signing failed on the key itself (not a PEM private key, not Ed25519). */
function isKeyError(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /Ed25519|DECODER|PEM|private key|asn1/i.test(message);
}

async function policySet(args: string[]): Promise<number> {
  const parsed = parseCommand('policy', args, SET_OPTIONS, COMMAND_HELP.policy ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const { values } = parsed;
  if (values.session === undefined) throw new UsageError('policy set needs --session ID', 'policy');
  const rules: PermissionRules = {
    ...(values.allow === undefined ? {} : { allow: values.allow }),
    ...(values.ask === undefined ? {} : { ask: values.ask }),
    ...(values.deny === undefined ? {} : { deny: values.deny }),
  };
  const bad = invalidRule(rules);
  if (bad !== undefined) throw new UsageError(bad, 'policy');
  if (values.mode !== undefined && !(permissionModes as readonly string[]).includes(values.mode)) {
    throw new UsageError(`--mode must be one of ${permissionModes.join(', ')}`, 'policy');
  }
  if (Object.keys(rules).length === 0 && values.mode === undefined)
    throw new UsageError('policy set needs a rule (--allow, --ask, --deny) or --mode', 'policy');
  const signing = await signingFromFlags(values, { command: 'policy', what: 'change' });
  const request: SetPolicyRequest = {
    ...(Object.keys(rules).length === 0 ? {} : { rules }),
    ...(values.mode === undefined ? {} : { permissionMode: values.mode as PermissionMode }),
    ...(values.reason === undefined ? {} : { reason: values.reason }),
    by: signing?.by ?? values.by ?? userNameFromEnv() ?? 'cli',
  };
  return withClient(async (client) => {
    let result;
    try {
      result = await client.session(values.session as string).setPolicy(request, signing);
    } catch (error) {
      // The session's refusal (a bad rule; unsigned, badly signed or expired where approvers are set) names why.
      if (error instanceof WorkflowUpdateFailedError) {
        const cause = error.cause instanceof Error ? error.cause.message : error.message;
        process.stderr.write(`session ${values.session} refused the policy change: ${cause}\n`);
        return ExitCode.failed;
      }
      if (signing !== undefined && isKeyError(error))
        throw new UsageError(`--key ${values.key}: not an Ed25519 private key (${(error as Error).message})`, 'policy');
      throw error;
    }
    if (values.json === true) writeJson(result);
    else {
      process.stdout.write(`policy version ${result.policyVersion}\n`);
      if (result.released.length > 0) process.stdout.write(`released: ${result.released.join(', ')}\n`);
      if (result.denied.length > 0) process.stdout.write(`denied: ${result.denied.join(', ')}\n`);
    }
    return ExitCode.ok;
  });
}

type ShadowEvent = Extract<SessionEvent, { type: 'PolicyShadowDecision' }>;

/** What the shadow rules would have changed, by kind of change (`allow → deny`, ...), from the session's events. */
export function summariseShadow(events: readonly SessionEvent[]): {
  changes: Array<{
    change: string;
    count: number;
    calls: Array<{ callId: string; toolName: string; turnId: string; reason: string }>;
  }>;
} {
  const byChange = new Map<string, ShadowEvent[]>();
  for (const event of events) {
    if (event.type !== 'PolicyShadowDecision') continue;
    const change = `${event.enforced} -> ${event.shadow}`;
    byChange.set(change, [...(byChange.get(change) ?? []), event]);
  }
  return {
    changes: [...byChange].map(([change, list]) => ({
      change,
      count: list.length,
      calls: list.map((event) => ({
        callId: event.callId,
        toolName: event.toolName,
        turnId: event.turnId,
        reason: event.shadowReason,
      })),
    })),
  };
}

async function policyDiff(args: string[]): Promise<number> {
  const parsed = parseCommand('policy', args, { session: { type: 'string' } }, COMMAND_HELP.policy ?? '');
  if (parsed === undefined) return ExitCode.ok;
  const sessionId = parsed.values.session;
  if (sessionId === undefined) throw new UsageError('policy diff needs --session ID', 'policy');
  return withClient(async (client) => {
    const session = client.session(sessionId);
    const events: SessionEvent[] = [];
    for (let cursor = 0; ;) {
      const page = await session.events(cursor);
      events.push(...page.events);
      if (page.events.length === 0 || page.next === cursor) break;
      cursor = page.next;
    }
    const summary = summariseShadow(events);
    if (parsed.values.json === true) writeJson({ sessionId, ...summary });
    else if (summary.changes.length === 0)
      process.stdout.write('the shadow rules decided every call as the enforced rules did\n');
    else {
      for (const { change, count, calls } of summary.changes) {
        process.stdout.write(`${change}: ${count} call${count === 1 ? '' : 's'}\n`);
        for (const call of calls)
          process.stdout.write(`  ${call.callId} ${call.toolName} (turn ${call.turnId}): ${call.reason}\n`);
      }
    }
    return ExitCode.ok;
  });
}
