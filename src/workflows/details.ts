import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { ApprovalRequest } from '../contracts/approval.js';
import { approvalSignal, pendingApprovalsSearchAttributeKey } from '../contracts/messages.js';
import { sessionLabelText } from '../contracts/session-label.js';

/** Bounds of the Web UI's current details, so a turn with many asks keeps them readable (and the payload small). */
export const CURRENT_DETAILS_LIMITS = {
  /** Pending requests listed one by one; the rest are counted. */
  requests: 5,
  /** Characters of a command, path or URL shown for a request. */
  subjectChars: 300,
  /** Characters of the reason a request asks. */
  reasonChars: 300,
  /** Characters of an Edit/Write diff preview. */
  previewChars: 1_500,
} as const;

/** What the Web UI shows about a session right now. */
export interface SessionView {
  runningTurnId: string | undefined;
  queuedTurns: number;
  completedTurns: number;
  pending: readonly ApprovalRequest[];
  /** Calls whose process ran outside the OS sandbox although the session did not turn it off, and the last reason. */
  unsandboxed?: { calls: number; lastReason: string };
}

/** Who the session is; repeated in the current details because a continued-as-new run has no static summary. */
export interface SessionIdentity {
  sessionId: string;
  cwd: string | undefined;
  permissionMode: string | undefined;
  /** The session's `sandbox.mode` option, when it set one. */
  sandboxMode?: string | undefined;
  /** v1.3: the session's human name (`SessionOptions.label`). */
  label?: string;
}

/**
 * The session as the Temporal Web UI shows it: the workflow's current details (markdown) and the
 * `SwitchyardPendingApprovals` search attribute, so "which sessions wait for me" is one visibility query.
 */
export class SessionDetails {
  /** Set from the worker's answer at Plan: upserting an attribute the namespace lacks would fail the task. */
  searchAttributeAvailable = false;
  #searchAttributeValue = 0;
  readonly #identity: SessionIdentity;
  /** What the details say of the session's identity, the same at every change: rendered once. */
  readonly #identityText: IdentityText;

  constructor(identity: SessionIdentity) {
    this.#identity = identity;
    this.#identityText = identityText(identity);
  }

  update(view: SessionView): void {
    // Workflow time: the details are rewritten at each change, so a wait is "since <time>", never a live clock.
    setCurrentDetails(
      renderCurrentDetails({
        identity: this.#identity,
        view,
        now: new Date(Date.now()),
        identityText: this.#identityText,
      }),
    );
    if (this.searchAttributeAvailable && this.#searchAttributeValue !== view.pending.length) {
      this.#searchAttributeValue = view.pending.length;
      upsertSearchAttributes([{ key: pendingApprovalsSearchAttributeKey, value: view.pending.length }]);
    }
  }
}

/**
 * The current details' markdown: the turn state, then each pending request with its tool, the command or path the
 * human approves, since when it waits, and the `approval` signal input to paste into the Web UI's "Send a Signal".
 * Blocks are separated by blank lines (the Web UI renders a list without one inline), and a line of lesser value
 * ends the text: the Web UI sizes the frame it renders the markdown in a line short.
 */
export function renderCurrentDetails(options: {
  identity: SessionIdentity;
  view: SessionView;
  now: Date;
  /** `identityText(identity)`, when the caller keeps it. */
  identityText?: IdentityText;
}): string {
  const { identity, view, now } = options;
  const { head, notes } = options.identityText ?? identityText(identity);
  const state =
    view.runningTurnId === undefined
      ? `**Idle.** ${view.completedTurns} turn(s) completed.`
      : `**Running turn** ${inlineCode(view.runningTurnId)}${view.queuedTurns > 0 ? `; ${view.queuedTurns} turn(s) queued` : ''}.`;
  const lines = [...head, '', state, ...notes];
  if (view.unsandboxed !== undefined && view.unsandboxed.calls > 0) {
    lines.push(
      '',
      `**${view.unsandboxed.calls} call(s) ran without the OS sandbox** on this worker: ${escapeMarkdown(clip(oneLine(view.unsandboxed.lastReason), CURRENT_DETAILS_LIMITS.reasonChars))}`,
    );
  }
  if (view.pending.length > 0) {
    lines.push(
      '',
      `**Waiting for ${view.pending.length} approval(s).** To decide from this page: More Actions → Send a Signal, name \`${approvalSignal.name}\`, input: the request's JSON below (\`"decision"\`: \`allow\`, \`allow_always\` or \`deny\`; add \`"reason"\` to a deny).`,
    );
    const listed = view.pending.slice(0, CURRENT_DETAILS_LIMITS.requests);
    listed.forEach((request, index) => lines.push('', ...renderRequest(request, index + 1, now)));
    const more = view.pending.length - listed.length;
    if (more > 0)
      lines.push('', `…and ${more} more: \`switchyard pending\` or the \`pendingApprovals\` query lists them all.`);
  }
  lines.push('', `_Updated ${now.toISOString()} (workflow time)._`);
  return lines.join('\n');
}

/** The lines of the current details that only the session's identity decides: above and below its state line. */
interface IdentityText {
  head: readonly string[];
  notes: readonly string[];
}

function identityText(identity: SessionIdentity): IdentityText {
  const head = [
    ...(identity.label === undefined ? [] : [`**${escapeMarkdown(sessionLabelText(identity.label))}**`, '']),
    `Session ${inlineCode(identity.sessionId)} · cwd ${identity.cwd === undefined ? "the worker's directory" : inlineCode(identity.cwd)} · mode ${inlineCode(identity.permissionMode ?? 'default')}`,
  ];
  // Loud where processes run with the worker's full rights: the session turned the sandbox off, or the worker had none.
  const notes =
    identity.sandboxMode === 'off'
      ? [
          '',
          "**Sandbox off** (session option `sandbox.mode`): Bash and background tasks run with the worker's full rights.",
        ]
      : [];
  return { head, notes };
}

function renderRequest(request: ApprovalRequest, position: number, now: Date): string[] {
  const subject = describeInput(request.toolName, request.input);
  const waited = now.getTime() - Date.parse(request.requestedAt);
  const since = `waiting since ${request.requestedAt}${waited >= 1_000 ? ` (${formatDuration(waited)} at the last update)` : ''}`;
  const lines = [
    `**${position}. ${request.toolName}**${subject === '' ? '' : ` ${inlineCode(subject)}`} — ${since}`,
    '',
  ];
  // One property per line, so the 64-character digest fits the Web UI's column without scrolling sideways.
  lines.push(
    fenced(
      JSON.stringify({ requestId: request.requestId, decision: 'allow', inputDigest: request.inputDigest }, null, 2),
      'json',
    ),
    '',
  );
  if (request.reason !== undefined && request.reason !== '')
    lines.push(`- why: ${escapeMarkdown(clip(oneLine(request.reason), CURRENT_DETAILS_LIMITS.reasonChars))}`);
  if (request.rememberRule !== undefined)
    lines.push(`- \`allow_always\` remembers ${inlineCode(request.rememberRule)}`);
  lines.push(
    `- request ${inlineCode(request.requestId)}, call ${inlineCode(request.callId)}, turn ${inlineCode(request.turnId)}`,
  );
  if (request.preview !== undefined && request.preview !== '') {
    lines.push('', fenced(clip(request.preview, CURRENT_DETAILS_LIMITS.previewChars), 'diff'));
  }
  return lines;
}

/** The part of a call's resolved input a human approves: the Bash command, the file path, the URL… */
export function describeInput(toolName: string, input: unknown): string {
  if (input === null || typeof input !== 'object') return '';
  const fields = input as Record<string, unknown>;
  const text = (key: string): string | undefined =>
    typeof fields[key] === 'string' && fields[key] !== '' ? (fields[key] as string) : undefined;
  const subject =
    text('command') ??
    text('file_path') ??
    text('notebook_path') ??
    text('url') ??
    (text('pattern') === undefined
      ? undefined
      : `${text('pattern')}${text('path') === undefined ? '' : ` in ${text('path')}`}`) ??
    text('path');
  if (subject !== undefined) return clip(subject, CURRENT_DETAILS_LIMITS.subjectChars);
  // Any other tool (MCP, custom): its input as compact JSON.
  const json = JSON.stringify(input) ?? '';
  return json === '{}' || toolName === '' ? '' : clip(json, CURRENT_DETAILS_LIMITS.subjectChars);
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A code span that survives backticks inside (CommonMark: a longer fence, padded). */
function inlineCode(text: string): string {
  const flat = oneLine(text);
  const longestRun = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  if (longestRun === 0) return `\`${flat}\``;
  const fence = '`'.repeat(longestRun + 1);
  return `${fence} ${flat} ${fence}`;
}

/** A fenced block that no line of `text` can close early. */
function fenced(text: string, language: string): string {
  const longestRun = Math.max(2, ...(text.match(/`{3,}/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, (character) => `\\${character}`);
}

function formatDuration(ms: number): string {
  const seconds = Math.floor(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  return `${hours}h ${minutes % 60}m`;
}
