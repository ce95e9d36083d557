/**
 * Live progress of running calls (like Claude Code's progress messages). It travels in the
 * execute activity's heartbeat details and is read from the server's description of the session's pending
 * activities: it never enters workflow history. Pure: safe to import from workflow code.
 */

/** What a tool reports through `context.reportProgress` (a string is a `message`). */
export interface ToolProgressReport {
  /** The tool's own words ("Fetched 3 of 10 pages"). */
  message?: string;
  /** The tail of the tool's output so far (Bash: stdout and stderr as they interleave). */
  outputTail?: string;
}

/** The progress part of a heartbeat: the latest report and when the tool made it. */
export interface ProgressHeartbeat extends ToolProgressReport {
  /** When the tool reported it (ISO 8601, the worker's clock). */
  reportedAt: string;
}

/** One running call's live progress, as `SessionHandle.progress()` returns it. */
export interface ToolProgress {
  callId: string;
  toolName: string;
  turnId: string;
  /** The tool's own progress message, when it reported one. */
  message?: string;
  /** The tail of its output so far (at most 2,000 characters for Bash). */
  outputTail?: string;
  /** The last non-empty line of `outputTail` (else of `message`). */
  latestLine?: string;
  /**
   * When the worker recorded these details (ISO 8601): the last heartbeat the server received. Heartbeats are
   * throttled to 0.8 × the session's `heartbeatTimeoutMs` (default 10 s, so up to 8 s behind).
   */
  updatedAt: string;
  /** When the tool last reported progress (ISO 8601); absent when it has reported none yet. */
  reportedAt?: string;
  /** 1 on the first attempt; higher when an idempotent call was retried after a lost worker. */
  attempt: number;
}

/** The last line of `text` that is not blank, without its line ending; undefined when there is none. */
export function lastNonEmptyLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const lines = text.split(/\r?\n|\r/);
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index] ?? '';
    if (line.trim() !== '') return line;
  }
  return undefined;
}

/** A report as the heartbeat carries it; a string is a message. */
export function progressHeartbeat(report: string | ToolProgressReport, reportedAt: Date): ProgressHeartbeat {
  const fields = typeof report === 'string' ? { message: report } : report;
  const heartbeat: ProgressHeartbeat = { reportedAt: reportedAt.toISOString() };
  if (typeof fields.message === 'string') heartbeat.message = fields.message;
  if (typeof fields.outputTail === 'string') heartbeat.outputTail = fields.outputTail;
  return heartbeat;
}

function stringField(value: unknown, name: string): string | undefined {
  const field = (value as Record<string, unknown>)[name];
  return typeof field === 'string' ? field : undefined;
}

/**
 * A call's progress from its activity's decoded heartbeat details; undefined for details that are not an execute
 * activity's (an older worker's, another activity's). `heartbeatAt` falls back to the details' own time.
 */
export function toolProgressFromHeartbeat(
  details: unknown,
  options: { attempt: number; heartbeatAt?: Date },
): ToolProgress | undefined {
  if (details === null || typeof details !== 'object') return undefined;
  const callId = stringField(details, 'callId');
  const toolName = stringField(details, 'toolName');
  const turnId = stringField(details, 'turnId');
  const at = stringField(details, 'at');
  if (callId === undefined || toolName === undefined || turnId === undefined) return undefined;
  const updatedAt = options.heartbeatAt?.toISOString() ?? at ?? new Date(0).toISOString();
  const progress: ToolProgress = { callId, toolName, turnId, updatedAt, attempt: options.attempt };
  const reported = (details as { progress?: unknown }).progress;
  if (reported !== null && typeof reported === 'object') {
    const message = stringField(reported, 'message');
    const outputTail = stringField(reported, 'outputTail');
    const reportedAt = stringField(reported, 'reportedAt');
    if (message !== undefined) progress.message = message;
    if (outputTail !== undefined) progress.outputTail = outputTail;
    if (reportedAt !== undefined) progress.reportedAt = reportedAt;
    const latestLine = lastNonEmptyLine(outputTail) ?? lastNonEmptyLine(message);
    if (latestLine !== undefined) progress.latestLine = latestLine;
  }
  return progress;
}
