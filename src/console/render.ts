import type { ApprovalDecisionRecord, ApprovalRequest } from '../contracts/approval.js';
import type { CallInDoubt } from '../contracts/calls-in-doubt.js';
import { isSessionApprover } from '../contracts/approvers-file.js';
import type { SessionEvent } from '../contracts/events.js';
import type { ActiveTurnView, ToolResult, TurnResult } from '../contracts/tool-result.js';
import { SafeHtml, clip, formatWait, html } from './html.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLE } from './page-assets.js';
import { buildTurnTimeline, turnIdsOf } from './timeline.js';
import { callRowsBlock, callRowsOf } from './call-rows.js';
import { ruleReach } from './rule-reach.js';
import type { TimelineCall, TurnTimeline } from './timeline.js';

/** Characters of one tool output shown on a session page (the full output is behind its artifact link). */
const OUTPUT_SHOWN_CHARS = 8_000;
/** Characters of one input field shown in an approval card. */
const INPUT_SHOWN_CHARS = 6_000;

export interface PendingEntry {
  sessionId: string;
  request: ApprovalRequest;
  /** v1.3: the session's label (`SessionOptions.label`), when it has one. */
  label?: string;
  /** The agent the session works for: the task queue its worker serves. */
  agent?: string;
}

export interface SessionRow {
  sessionId: string;
  startedAt?: Date;
  pending: number;
  /** v1.3: the session's label. */
  label?: string;
}

/** A running call's live state, from its activity's last heartbeat (never history). */
export interface LiveCall {
  activityId: string;
  attempt: number;
  state: string;
  callId?: string;
  lastHeartbeatAt?: string;
  activeMs?: number;
  progress?: string;
}

export interface SessionPageData {
  sessionId: string;
  runId?: string;
  status: string;
  /** Set when the session could not be read (no worker answering queries, unknown id...). */
  problem?: string;
  pending: ApprovalRequest[];
  events: SessionEvent[];
  decisions: ApprovalDecisionRecord[];
  turns: TurnResult[];
  activeTurn: ActiveTurnView | null;
  live: LiveCall[];
  webUiUrl?: string;
  /** The turn the timeline shows (default: the running turn, else the last one). */
  turnId?: string;
  /** v1.3: the session's label (`SessionOptions.label`), from the memo its client set at start. */
  label?: string;
  /** The task queue the session runs on: the agent its approval cards name. */
  taskQueue?: string;
  /** v1.3: calls whose worker died while they ran (query `callsInDoubt`); absent when the session cannot say. */
  callsInDoubt?: CallInDoubt[];
}

/** The person looking at a page: their approver name and groups. */
export interface Viewer {
  name: string;
  groups: readonly string[];
}

export interface PageContext {
  identity: string;
  viewer: Viewer;
  csrfToken: string;
  nonce: string;
  now: number;
}

/** The page shell: inline style and script (no build step), the CSRF token in a meta tag for the script's POSTs. */
export function page(options: {
  title: string;
  context: PageContext;
  body: SafeHtml;
  /** Where the page reads its sections again (JSON), every 1.5 s when it has no stream. */
  liveUrl: string;
  /** Where the page's sections are pushed (server-sent events) when they change; the page then does not poll. */
  streamUrl?: string;
}): string {
  const { context } = options;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${context.csrfToken}"><meta name="live-url" content="${options.liveUrl}"><meta name="stream-url" content="${options.streamUrl ?? ''}">
<title>${options.title}</title><style nonce="${context.nonce}">${new SafeHtml(CONSOLE_STYLE)}</style></head>
<body><header class="top"><a href="/" class="brand">Switchyard console</a><span class="who">deciding as <b>${context.identity}</b></span></header>
<div id="flash" role="status" aria-live="polite"></div>
<main>${options.body}</main>
<script nonce="${context.nonce}">${new SafeHtml(CONSOLE_SCRIPT)}</script></body></html>`.html;
}

/** Home page sections: requests waiting across the namespace, and running sessions. */
export function homeSections(
  data: { pending: PendingEntry[]; sessions: SessionRow[]; problem?: string },
  context: Pick<PageContext, 'now' | 'viewer'>,
): Record<string, SafeHtml> {
  const { now, viewer } = context;
  const sorted = [...data.pending].sort(
    (a, b) => Date.parse(b.request.requestedAt) - Date.parse(a.request.requestedAt),
  );
  return {
    'pending-title': html`<h1>Waiting for approval <span class="count">${sorted.length}</span></h1>${data.problem === undefined ? '' : html`<p class="problem">${data.problem}</p>`}`,
    pending:
      sorted.length === 0
        ? html`<p class="empty" data-key="empty">No session is waiting for approval. This page updates by itself.</p>`
        : html`${sorted.map((entry) => requestCard(entry, now, { showSession: true, viewer }))}`,
    sessions: sessionList(data.sessions),
  };
}

export function homeBody(sections: Record<string, SafeHtml>): SafeHtml {
  return html`<section id="pending-title" data-live>${sections['pending-title']}</section>
<section id="pending" class="requests" data-live data-keyed>${sections.pending}</section>
<section id="sessions" data-live>${sections.sessions}</section>`;
}

function sessionList(sessions: SessionRow[]): SafeHtml {
  if (sessions.length === 0) return html`<h2>Running sessions</h2><p class="empty">No running session.</p>`;
  return html`<h2>Running sessions</h2><table class="sessions"><thead><tr><th>Session</th><th>Started</th><th>Waiting</th></tr></thead><tbody>${sessions.map(
    (row) =>
      html`<tr><td><a href="${sessionHref(row.sessionId)}">${row.sessionId}</a>${row.label === undefined ? '' : html` <span class="session-label">${row.label}</span>`}</td><td>${row.startedAt?.toISOString() ?? ''}</td><td>${row.pending > 0 ? html`<span class="badge status-awaiting_approval">${row.pending}</span>` : '0'}</td></tr>`,
  )}</tbody></table>`;
}

export function sessionHref(sessionId: string, turnId?: string): string {
  return `/session/${encodeURIComponent(sessionId)}${turnId === undefined ? '' : `?turn=${encodeURIComponent(turnId)}`}`;
}

/**
 * One approval request with its buttons; `data-key` lets the live update keep a card (and a half-typed reason). A
 * request that names its approvers shows them, and shows the buttons only to those approvers.
 */
export function requestCard(
  entry: PendingEntry,
  now: number,
  options: { showSession: boolean; viewer: Viewer },
): SafeHtml {
  const { sessionId, request } = entry;
  const approvers = request.approvers;
  const mayDecide =
    approvers === undefined ||
    isSessionApprover({ name: options.viewer.name, sessionApprovers: approvers, groups: options.viewer.groups });
  const waited = now - Date.parse(request.requestedAt);
  // The folder is said once, in the origin line, for every tool.
  const { cwd, ...shown } = request;
  return html`<article class="request" tabindex="0" data-key="${sessionId}/${request.requestId}" data-session="${sessionId}" data-request="${request.requestId}" data-digest="${request.inputDigest}">
<header><span class="tool">${request.toolName}</span>${options.showSession ? html` <a class="session" href="${sessionHref(sessionId)}">${sessionId}</a>` : ''}
<span class="meta">call <code>${request.callId}</code> · turn <code>${request.turnId}</code> · waiting <span class="ago" data-since="${request.requestedAt}">${formatWait(waited)}</span></span></header>
${originLine(entry, cwd)}
${renderInput(shown)}
<p class="why"><b>Why it asks:</b> ${request.reason ?? 'the session’s rules ask for this call'}</p>
<p class="rule"><b>“Always allow” adds:</b> ${request.rememberRule === undefined ? html`<span class="muted">nothing: this call can only be allowed once</span>` : html`<code>${request.rememberRule}</code> — <span class="reach">${ruleReach(request.rememberRule)}</span>, without asking again`}</p>
${approvers === undefined ? '' : html`<p class="approvers"><b>Approvers:</b> ${approvers.length === 0 ? 'nobody' : approvers.join(', ')}</p>`}
${
  mayDecide
    ? html`<div class="actions"><button class="approve" data-decision="allow">Approve — run this call once <kbd>a</kbd></button><button class="always" data-decision="allow_always">Always allow <kbd>A</kbd></button><input class="reason" name="reason" maxlength="2000" placeholder="reason for a deny (optional)" aria-label="reason"><button class="deny" data-decision="deny">Deny <kbd>d</kbd></button></div>`
    : html`<p class="not-approver muted">You (${options.viewer.name}) are not one of this request's approvers.</p>`
}
<p class="feedback" role="status"></p>
</article>`;
}

/** Who asks, from where, since when: the session's label and agent, the working folder, the request time. */
function originLine(entry: PendingEntry, cwd: string | undefined): SafeHtml {
  const asked = entry.request.requestedAt;
  const shownTime = Number.isNaN(Date.parse(asked))
    ? asked
    : new Date(asked)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC');
  return html`<p class="origin">${entry.label === undefined ? html`<span class="muted">no label</span>` : html`<b class="origin-label">${entry.label}</b>`}${entry.agent === undefined ? '' : html` · agent <code class="origin-agent">${entry.agent}</code>`}${cwd === undefined || cwd === '' ? '' : html` · in <code class="origin-cwd">${cwd}</code>`} · asked <time datetime="${asked}">${shownTime}</time></p>`;
}

function field(input: unknown, name: string): unknown {
  return typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The resolved input as a human reads it: the command, the diff, the URL and host — never only a description. */
export function renderInput(request: Pick<ApprovalRequest, 'toolName' | 'input' | 'preview' | 'cwd'>): SafeHtml {
  const { toolName, input } = request;
  const json = html`<details class="raw"><summary>Full input (JSON)</summary><pre>${clip(JSON.stringify(input, null, 2) ?? 'undefined', INPUT_SHOWN_CHARS)}</pre></details>`;
  const filePath = text(field(input, 'file_path'));
  switch (toolName) {
    case 'Bash': {
      const command = text(field(input, 'command')) ?? '';
      const description = text(field(input, 'description'));
      const background = field(input, 'run_in_background') === true;
      const where =
        request.cwd === undefined || request.cwd === ''
          ? ''
          : html`<p class="cwd muted">in <code>${request.cwd}</code></p>`;
      return html`<pre class="command"><span class="prompt">$ </span>${clip(command, INPUT_SHOWN_CHARS)}</pre>${where}${
        description === undefined ? '' : html`<p class="muted">The model describes it as: ${description}</p>`
      }${background ? html`<p class="muted">Runs in the background.</p>` : ''}${json}`;
    }
    case 'Edit':
    case 'Write': {
      const body =
        request.preview !== undefined
          ? diffBlock(request.preview)
          : toolName === 'Edit'
            ? diffBlock(
                [
                  ...(text(field(input, 'old_string')) ?? '').split('\n').map((line) => `-${line}`),
                  ...(text(field(input, 'new_string')) ?? '').split('\n').map((line) => `+${line}`),
                ].join('\n'),
              )
            : diffBlock(
                (text(field(input, 'content')) ?? '')
                  .split('\n')
                  .map((line) => `+${line}`)
                  .join('\n'),
              );
      return html`<p class="path">${toolName === 'Write' ? 'Write' : 'Edit'} <code>${filePath ?? ''}</code>${field(input, 'replace_all') === true ? ' (every occurrence)' : ''}</p>${body}${json}`;
    }
    case 'WebFetch': {
      const url = text(field(input, 'url')) ?? '';
      let host = '(not a valid URL)';
      try {
        host = new URL(url).host;
      } catch {
        // shown as invalid
      }
      const prompt = text(field(input, 'prompt'));
      return html`<p class="url">Fetch <b class="host">${host}</b><br><code>${url}</code></p>${prompt === undefined ? '' : html`<p class="muted">Prompt: ${clip(prompt, 1_000)}</p>`}${json}`;
    }
    default:
      return html`${filePath === undefined ? '' : html`<p class="path"><code>${filePath}</code></p>`}${request.preview === undefined ? '' : html`<pre class="preview">${clip(request.preview, INPUT_SHOWN_CHARS)}</pre>`}<pre class="input-json">${clip(JSON.stringify(input, null, 2) ?? 'undefined', INPUT_SHOWN_CHARS)}</pre>`;
  }
}

/** A unified diff, line by line, coloured by its first character. */
export function diffBlock(diff: string): SafeHtml {
  const lines = clip(diff, INPUT_SHOWN_CHARS).split('\n');
  return html`<pre class="diff">${lines.map((line) => {
    const kind =
      line.startsWith('+++') || line.startsWith('---')
        ? 'file'
        : line.startsWith('+')
          ? 'add'
          : line.startsWith('-')
            ? 'del'
            : line.startsWith('@@')
              ? 'hunk'
              : 'ctx';
    return html`<span class="${kind}">${line}\n</span>`;
  })}</pre>`;
}

/** Session page sections; each is replaced as a whole by the live update, except the keyed approval cards. */
export function sessionSections(
  data: SessionPageData,
  context: Pick<PageContext, 'now' | 'viewer'>,
): Record<string, SafeHtml> {
  const turnIds = turnIdsOf(data.events);
  const turnId = data.turnId ?? data.activeTurn?.turnId ?? turnIds.at(-1);
  const timeline = turnId === undefined ? undefined : buildTurnTimeline(data.events, turnId);
  const running = data.activeTurn;
  return {
    head: html`<h1>Session <code>${data.sessionId}</code>${data.label === undefined ? '' : html` <span class="session-label">${data.label}</span>`}</h1>
<p class="status">${data.status}${data.runId === undefined ? '' : html` · run <code>${data.runId}</code>`} · ${running === null ? 'idle' : html`running turn <code>${running.turnId}</code>`}
${data.webUiUrl === undefined ? '' : html` · <a class="webui" href="${data.webUiUrl}" target="_blank" rel="noopener noreferrer">Open in the Temporal Web UI</a>`}</p>
${data.problem === undefined ? '' : html`<p class="problem">${data.problem}</p>`}
<div class="actions interrupt-box" data-session="${data.sessionId}">${
      running === null
        ? html`<button class="interrupt" disabled>Interrupt</button> <span class="muted">no turn is running</span>`
        : html`<button class="interrupt">Interrupt turn ${running.turnId}</button>${running.interruptible ? '' : html` <span class="muted">(a running call finishes first: its tool blocks interrupts)</span>`}`
    }</div>`,
    pending:
      data.pending.length === 0
        ? html`<p class="empty" data-key="empty">Nothing waiting for approval.</p>`
        : html`${data.pending.map((request) => requestCard({ sessionId: data.sessionId, request, ...labelAndAgent(data) }, context.now, { showSession: false, viewer: context.viewer }))}`,
    timeline: html`<h2>Timeline</h2>${turnPicker(data.sessionId, turnIds, turnId)}${timeline === undefined ? html`<p class="empty">No turn yet.</p>` : timelineBlock(timeline, context.now)}`,
    live: liveBlock(data.live),
    calls: turnId === undefined ? callRowsBlock([]) : callRowsBlock(callRowsOf(data.events, turnId)),
    results: resultsBlock(data.turns.find((turn) => turn.turnId === turnId)),
    decisions: decisionLog(data.decisions),
    doubt: inDoubtBlock(data.sessionId, data.callsInDoubt ?? []),
  };
}

function labelAndAgent(data: SessionPageData): Pick<PendingEntry, 'label' | 'agent'> {
  return {
    ...(data.label === undefined ? {} : { label: data.label }),
    ...(data.taskQueue === undefined ? {} : { agent: data.taskQueue }),
  };
}

export function sessionBody(sections: Record<string, SafeHtml>): SafeHtml {
  return html`<section id="head" data-live>${sections.head}</section>
<h2>Waiting for approval</h2><section id="pending" class="requests" data-live data-keyed>${sections.pending}</section>
<section id="timeline" data-live>${sections.timeline}</section>
<section id="live" data-live>${sections.live}</section>
<section id="calls" data-live>${sections.calls}</section>
<section id="results" data-live>${sections.results}</section>
<section id="doubt" data-live>${sections.doubt}</section>
<section id="decisions" data-live>${sections.decisions}</section>`;
}

/**
 * Calls in doubt (docs/SEMANTICS.md, Calls in doubt): each with what it ran, its idempotency key and the three ways to
 * settle it, as `switchyard doubt resolve` commands (the console lists them; it does not settle them itself).
 */
export function inDoubtBlock(sessionId: string, calls: readonly CallInDoubt[]): SafeHtml {
  if (calls.length === 0) return html``;
  return html`<h2>Calls in doubt</h2><p class="muted">Their worker died while they ran: each may have partly run. Say what happened:</p>${calls.map(
    (call) => html`<article class="request in-doubt" data-key="${sessionId}/doubt/${call.callId}">
<header><span class="tool">${call.toolName}</span> <span class="meta">call <code>${call.callId}</code> · turn <code>${call.turnId}</code> · started <span class="ago" data-since="${call.startedAt}">${call.startedAt}</span></span></header>
<pre class="command">${call.inputSummary}</pre>
<p class="muted">idempotency key <code>${call.idempotencyKey}</code></p>
<pre class="doubt-actions">switchyard doubt resolve ${call.callId} --session ${sessionId} --outcome ran --output "what it produced"
switchyard doubt resolve ${call.callId} --session ${sessionId} --outcome not-ran
switchyard doubt resolve ${call.callId} --session ${sessionId} --outcome retry</pre>
</article>`,
  )}`;
}

function turnPicker(sessionId: string, turnIds: string[], selected: string | undefined): SafeHtml {
  if (turnIds.length <= 1) return html``;
  return html`<nav class="turns">Turns: ${turnIds.slice(-20).map((id) => (id === selected ? html`<b>${id}</b> ` : html`<a href="${sessionHref(sessionId, id)}">${id}</a> `))}</nav>`;
}

const pct = (value: number): string => `${Math.max(0, Math.min(100, value)).toFixed(2)}%`;

/** Groups as lanes, calls as bars from scheduled to finished, approval waits shaded, status as colour. */
export function timelineBlock(timeline: TurnTimeline, now: number): SafeHtml {
  const end = timeline.completedAt ?? now;
  const span = Math.max(end - timeline.startedAt, 1);
  const x = (at: number): number => ((at - timeline.startedAt) / span) * 100;
  const bar = (call: TimelineCall): SafeHtml => {
    const finished = call.finishedAt ?? end;
    const width = Math.max(x(finished) - x(call.scheduledAt), 0.6);
    const duration = finished - call.scheduledAt;
    const wait =
      call.approval === undefined
        ? ''
        : html`<div class="wait" style="left:${pct(((call.approval.from - call.scheduledAt) / Math.max(duration, 1)) * 100)};width:${pct((((call.approval.to ?? finished) - call.approval.from) / Math.max(duration, 1)) * 100)}" title="waited for approval ${formatWait((call.approval.to ?? finished) - call.approval.from)}"></div>`;
    // Scheduled but not yet asking or running (its group waits for the one before): drawn pale.
    const queuedUntil = Math.min(call.approval?.from ?? call.startedAt ?? finished, finished);
    const queued =
      queuedUntil - call.scheduledAt <= 0
        ? ''
        : html`<div class="queued" style="left:0;width:${pct(((queuedUntil - call.scheduledAt) / Math.max(duration, 1)) * 100)}" title="queued ${queuedUntil - call.scheduledAt} ms"></div>`;
    return html`<div class="bar status-${call.status}" data-call="${call.callId}" style="left:${pct(x(call.scheduledAt))};width:${pct(width)}" title="${call.toolName} ${call.callId}: ${call.waitingForClient === true ? 'waiting for the client' : call.status}, ${duration} ms">${queued}${wait}<span class="label">${call.toolName} · ${call.callId}</span></div>`;
  };
  return html`<div class="timeline" data-turn="${timeline.turnId}">
<p class="muted">Turn <code>${timeline.turnId}</code>: ${timeline.completedAt === undefined ? 'running' : html`${timeline.completedAt - timeline.startedAt} ms${timeline.stopped === true ? ', stopped' : ''}`} · ${timeline.lanes.length} group(s)</p>
${timeline.lanes.map(
  (
    lane,
  ) => html`<div class="lane" data-group="${lane.groupIndex}"><div class="lane-label">Group ${lane.groupIndex + 1}<br><span class="muted">${lane.calls.length > 1 ? `${lane.calls.length} in parallel` : lane.calls[0]?.readOnly === false ? 'exclusive' : '1 call'}</span></div>
<div class="track">${lane.calls.map((call, index) => html`<div class="row" style="top:${index * 26}px">${bar(call)}</div>`)}<div class="spacer" style="height:${lane.calls.length * 26}px"></div></div></div>`,
)}
<p class="legend"><span class="badge status-scheduled">queued / scheduled</span> <span class="badge status-awaiting_approval">waiting for approval</span> <span class="badge status-executing">running</span> <span class="badge status-success">success</span> <span class="badge status-error">error</span> <span class="badge status-denied">denied</span> <span class="badge status-cancelled">cancelled</span></p>
</div>`;
}

function liveBlock(live: LiveCall[]): SafeHtml {
  if (live.length === 0) return html``;
  return html`<h2>Running now</h2>${live.map(
    (
      call,
    ) => html`<div class="live-call"><p><b>${call.callId === undefined ? `activity ${call.activityId}` : `call ${call.callId}`}</b> · ${call.state} · attempt ${call.attempt}${call.activeMs === undefined ? '' : ` · ${formatWait(call.activeMs)} active`}${call.lastHeartbeatAt === undefined ? '' : ` · last heartbeat ${call.lastHeartbeatAt}`}</p>
<pre class="tail">${call.progress === undefined ? '(no output yet)' : clip(call.progress, OUTPUT_SHOWN_CHARS)}</pre></div>`,
  )}`;
}

function resultsBlock(turn: TurnResult | undefined): SafeHtml {
  if (turn === undefined) return html``;
  return html`<h2>Results of turn <code>${turn.turnId}</code>${turn.stopped ? html` <span class="badge status-cancelled">stopped${turn.stopReason === undefined ? '' : `: ${turn.stopReason}`}</span>` : ''}</h2>${turn.results.map(resultBlock)}`;
}

/** Whether the call's process ran in the OS sandbox: loud (an error badge) when it did not. */
export function sandboxBadge(result: Pick<ToolResult, 'sandboxed'>): SafeHtml {
  if (result.sandboxed === undefined) return html``;
  return result.sandboxed
    ? html` · <span class="muted">sandboxed</span>`
    : html` · <span class="badge status-error">not sandboxed</span>`;
}

function resultBlock(result: ToolResult): SafeHtml {
  const budget = result.budget;
  return html`<div class="result" data-call="${result.callId}"><p><span class="badge status-${result.status}">${result.status}</span> <b>${result.toolName}</b> · call <code>${result.callId}</code> · ${result.timings.totalMs} ms${result.timings.permissionWaitMs > 0 ? ` (waited ${formatWait(result.timings.permissionWaitMs)} for approval)` : ''}${result.errorCode === undefined ? '' : html` · <code>${result.errorCode}</code>`}${sandboxBadge(result)}</p>
${budget === undefined ? '' : html`<p class="budget">Budget: ${budget.originalBytes} bytes of output, ${budget.modelBytes} to the model${budget.truncated ? html`, cut by <code>${budget.policy}</code>` : ''}${budget.artifact === undefined ? '' : html` · <a href="/artifact?uri=${encodeURIComponent(budget.artifact)}" target="_blank" rel="noopener">full output</a>`}</p>`}
<pre class="output">${clip(result.modelContent, OUTPUT_SHOWN_CHARS)}</pre></div>`;
}

const IGNORED_TEXT: Record<NonNullable<ApprovalDecisionRecord['ignoredBecause']>, string> = {
  unknown: 'no such request in this session',
  already_decided: 'the request was already decided',
  digest_mismatch: 'the input digest did not match the request (the input changed?)',
  invalid: 'the signal was malformed',
  hook_answered_first: 'a PermissionRequest hook answered first',
  unsigned: 'this session takes only signed approvals from its approvers',
  bad_signature: 'the signature did not check out',
  unknown_approver: 'the signer is not in the approvers file',
  not_an_approver: "the signer is not one of this session's approvers",
  expired: 'the signed grant had expired',
  verification_failed: 'the signature could not be checked',
};

/** One sentence on what a session did with a decision: shown as the feedback of a button and in the log. */
export function describeDecision(record: ApprovalDecisionRecord): string {
  const what =
    record.decision === undefined
      ? 'decision'
      : { allow: 'Approve', allow_always: 'Always allow', deny: 'Deny' }[record.decision];
  if (record.outcome === 'accepted')
    return `${what} took effect${record.by === undefined ? '' : ` (by ${record.by}${record.verified ? ', signature verified' : ''})`}.`;
  const why = record.ignoredBecause === undefined ? 'unknown reason' : IGNORED_TEXT[record.ignoredBecause];
  return `${what} was ignored: ${why}${record.detail === undefined || record.ignoredBecause === 'hook_answered_first' ? '' : ` (${record.detail})`}.`;
}

function decisionLog(decisions: ApprovalDecisionRecord[]): SafeHtml {
  const rows = [...decisions].reverse();
  return html`<h2>Decision log</h2>${
    rows.length === 0
      ? html`<p class="empty">No approval signal received yet.</p>`
      : html`<table class="decisions"><thead><tr><th>When</th><th>Request</th><th>Call</th><th>Input</th><th>Decision</th><th>By</th><th>Outcome</th><th>Reason</th></tr></thead><tbody>${rows.map(
          (record) =>
            html`<tr class="${record.outcome}"><td>${record.at}</td><td><code>${record.requestId}</code></td><td>${record.toolName ?? ''} ${record.callId === undefined ? '' : html`<code>${record.callId}</code>`}</td><td>${record.inputSummary === undefined ? '' : html`<code class="input-summary">${record.inputSummary}</code>`}${record.inputDigest === undefined ? '' : html`<br><span class="digest muted" title="SHA-256 of the input">sha256 <code>${record.inputDigest}</code></span>`}</td><td>${record.decision ?? ''}</td><td>${record.by ?? ''}</td><td>${describeDecision(record)}</td><td>${record.reason ?? ''}</td></tr>`,
        )}</tbody></table>`
  }`;
}
