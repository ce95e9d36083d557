import path from 'node:path';
import type { ApprovalRequest } from '../contracts/approval.js';
import type { SessionEvent } from '../contracts/events.js';
import type { ToolProgress } from '../contracts/progress.js';
import type { ToolCall } from '../contracts/tool-call.js';
import type { TurnResult } from '../contracts/tool-result.js';
import type { SessionHandle } from '../client/switchyard-client.js';
import { ExitCode, UsageError, formatElapsed, onStopSignal, parseCommand, withClient, writeJson } from './common.js';
import { COMMAND_HELP } from './help.js';
import { describeRequest, readCalls, turnSucceeded } from './session-commands.js';

/** How often `run` reads the session's events, pending approvals and progress while the turn runs. */
const POLL_MS = 400;
/** Lines of each result's text `run` prints (all of it with --json). */
const RESULT_LINES = 40;

type CallState =
  | { kind: 'queued' }
  | { kind: 'approval'; request: ApprovalRequest }
  | { kind: 'running'; since: number; progress?: ToolProgress }
  | { kind: 'done'; outcome: string };

/** One call's status line; `live` adds what changes every second (elapsed time, the output's latest line). */
export function statusLine(call: ToolCall, state: CallState, sessionId: string, live: boolean): string {
  const name = `${call.id} ${call.name}`;
  switch (state.kind) {
    case 'queued':
      return `${name}: queued`;
    case 'approval':
      // The command that approves it on a line of its own, never cut to the terminal's width: it is there to be copied.
      return `${name}: waiting for approval (${describeRequest(state.request)})\n  approve: switchyard approve ${state.request.requestId} --session ${sessionId}`;
    case 'running': {
      if (!live) return `${name}: running`;
      const latest = state.progress?.message ?? state.progress?.latestLine;
      return `${name}: running ${formatElapsed(Date.now() - state.since)}${latest === undefined ? '' : ` | ${latest}`}`;
    }
    case 'done':
      return `${name}: ${state.outcome}`;
    default: {
      const exhaustive: never = state;
      return exhaustive;
    }
  }
}

/** The calls' statuses on stderr: redrawn in place on a terminal, a line per change otherwise. */
class StatusView {
  #drawn = 0;
  readonly #printed = new Map<string, string>();

  constructor(
    readonly calls: readonly ToolCall[],
    readonly sessionId: string,
    readonly tty: boolean,
  ) {}

  render(states: ReadonlyMap<string, CallState>): void {
    const lines = this.calls.map((call) =>
      statusLine(call, states.get(call.id) ?? { kind: 'queued' }, this.sessionId, this.tty),
    );
    if (!this.tty) {
      for (const [index, call] of this.calls.entries()) {
        const line = lines[index] ?? '';
        if (this.#printed.get(call.id) === line) continue;
        this.#printed.set(call.id, line);
        process.stderr.write(`${line}\n`);
      }
      return;
    }
    // A call's status line is cut to the terminal's width (a wrapped live line would break the redraw); an approve
    // command below it is kept whole and the rows it wraps onto are counted, so the redraw still clears them.
    const columns = Math.max(20, process.stderr.columns ?? 100);
    const width = columns - 1;
    const physical = lines.flatMap((line) => {
      const [status = '', ...rest] = line.split('\n');
      return [status.length > width ? `${status.slice(0, width - 1)}…` : status, ...rest];
    });
    const rows = physical.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / columns)), 0);
    process.stderr.write(`${this.#drawn > 0 ? `\x1b[${this.#drawn}F\x1b[J` : ''}${physical.join('\n')}\n`);
    this.#drawn = rows;
  }
}

/** Folds the turn's events into each call's state. */
function applyEvents(states: Map<string, CallState>, events: readonly SessionEvent[], turnId: string): void {
  for (const event of events) {
    if (event.turnId !== turnId || !('callId' in event) || typeof event.callId !== 'string') continue;
    if (event.type === 'ToolCallStarted')
      states.set(event.callId, { kind: 'running', since: Date.parse(event.at) || Date.now() });
    else if (event.type === 'ToolCallResult') states.set(event.callId, { kind: 'done', outcome: 'done' });
    else if (event.type === 'ToolCallError') states.set(event.callId, { kind: 'done', outcome: 'failed' });
    else if (event.type === 'PermissionDenied') states.set(event.callId, { kind: 'done', outcome: 'denied' });
  }
}

/** `switchyard run FILE`: a turn from a file, its calls' live status, then the results. */
export async function runCommand(args: string[]): Promise<number> {
  const parsed = parseCommand(
    'run',
    args,
    { session: { type: 'string' }, 'turn-id': { type: 'string' }, cwd: { type: 'string' } },
    COMMAND_HELP.run ?? '',
    { positionals: true },
  );
  if (parsed === undefined) return ExitCode.ok;
  const { values, positionals } = parsed;
  if (positionals.length !== 1)
    throw new UsageError('run needs one calls file: switchyard run calls.json (or - for stdin)', 'run');
  const file = positionals[0] as string;
  const { calls, turnId: fileTurnId } = await readCalls(file === '-' ? '-' : `@${file}`, file === '-' ? 'stdin' : file);
  const stamp = Date.now().toString(36);
  const sessionId = values.session ?? `run-${stamp}`;
  const turnId = values['turn-id'] ?? fileTurnId ?? `run-${stamp}`;
  return withClient(async (client) => {
    process.stderr.write(
      `session ${sessionId}, turn ${turnId}, ${calls.length} call${calls.length === 1 ? '' : 's'}\n`,
    );
    let settled = false;
    const turn = client
      .executeTurnWithStart(
        sessionId,
        { turnId, calls },
        values.cwd === undefined ? {} : { cwd: path.resolve(values.cwd) },
      )
      .finally(() => {
        settled = true;
      });
    let detach: (signal: NodeJS.Signals) => void = () => {};
    const detached = new Promise<NodeJS.Signals>((resolve) => {
      detach = resolve;
    });
    let stopping = false;
    const release = onStopSignal((signal) => {
      stopping = true;
      detach(signal);
    });
    const view = new StatusView(calls, sessionId, process.stderr.isTTY === true);
    const states = new Map<string, CallState>();
    let finished = false;
    const watching = watch(client.session(sessionId), {
      turnId,
      states,
      view,
      done: () => settled || stopping || finished,
    });
    try {
      const outcome = await Promise.race([
        watching.then(() => turn),
        detached,
        turn, // a rejected turn ends the watch at once
      ]);
      if (typeof outcome === 'string') {
        process.stderr.write(
          `\ndetached: the turn goes on in session ${sessionId}. Re-attach: switchyard run ${file} --session ${sessionId} --turn-id ${turnId}; ` +
            `stop it: switchyard interrupt --session ${sessionId}\n`,
        );
        return outcome === 'SIGINT' ? ExitCode.interrupted : 143;
      }
      const result = outcome;
      for (const entry of result.results) states.set(entry.callId, { kind: 'done', outcome: entry.status });
      view.render(states);
      if (values.json === true) writeJson(result);
      else printResults(result);
      return turnSucceeded(result) ? ExitCode.ok : ExitCode.callsFailed;
    } finally {
      release();
      // The watch's last query must end before the connection closes: a query the client is retrying would
      // otherwise fire on a closed channel and throw from a timer.
      finished = true;
      await watching;
    }
  });
}

/** Polls events, pending approvals and progress of the turn until `done()`, redrawing the view. */
async function watch(
  session: SessionHandle,
  options: { turnId: string; states: Map<string, CallState>; view: StatusView; done: () => boolean },
): Promise<void> {
  const { turnId, states, view } = options;
  let cursor = 0;
  view.render(states);
  while (!options.done()) {
    try {
      const page = await session.events(cursor);
      cursor = page.next;
      applyEvents(states, page.events, turnId);
      const [pending, progress] = await Promise.all([session.pendingApprovals(), session.progress()]);
      const waiting = new Set<string>();
      for (const request of pending.filter((candidate) => candidate.turnId === turnId)) {
        waiting.add(request.callId);
        states.set(request.callId, { kind: 'approval', request });
      }
      for (const [callId, state] of states) {
        // Approved: the call runs (its ToolCallStarted event may still be on its way).
        if (state.kind === 'approval' && !waiting.has(callId))
          states.set(callId, { kind: 'running', since: Date.now() });
      }
      for (const entry of progress.filter((candidate) => candidate.turnId === turnId)) {
        const state = states.get(entry.callId);
        if (state?.kind === 'running') states.set(entry.callId, { ...state, progress: entry });
      }
    } catch {
      // The session may not exist yet (the turn's update-with-start is still on its way): ask again.
    }
    view.render(states);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function printResults(result: TurnResult): void {
  if (result.stopped)
    process.stdout.write(
      `turn ${result.turnId} stopped${result.stopReason === undefined ? '' : `: ${result.stopReason}`}\n`,
    );
  for (const entry of result.results) {
    process.stdout.write(
      `\n${entry.callId} ${entry.toolName}: ${entry.status}${entry.budget?.artifact === undefined ? '' : ` (full output: switchyard artifact ${entry.budget.artifact})`}\n`,
    );
    const lines = entry.modelContent.split('\n');
    for (const line of lines.slice(0, RESULT_LINES)) process.stdout.write(`  ${line}\n`);
    if (lines.length > RESULT_LINES)
      process.stdout.write(`  … ${lines.length - RESULT_LINES} more lines (--json prints them all)\n`);
  }
}
