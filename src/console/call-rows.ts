/**
 * The console's call rows, drawn from the session's event stream alone (v1.3): each call of a turn with its status,
 * its live output (`ToolCallProgress`), and what its result shows (`ToolCallResult`'s `display` and `preview`).
 * Every display kind has a drawing: text, Bash output, a diff, an MCP call, a background task, an image, a web
 * fetch and a search. A UI built on the `events` query can draw the same rows.
 */
import type { SessionEvent } from '../contracts/events.js';
import type { CallStatus, ToolDisplay } from '../contracts/tool-result.js';
import { SafeHtml, html } from './html.js';

export interface CallRow {
  callId: string;
  toolName: string;
  status: CallStatus;
  totalMs?: number;
  queuedMs?: number;
  display?: ToolDisplay;
  preview?: string;
  previewTruncated?: boolean;
  errorCode?: string;
  message?: string;
  /** The latest live output and how long the call had run then. */
  progress?: { output?: string; message?: string; elapsedMs: number; count: number };
}

/** The calls of one turn, in the order they were scheduled, from its events. */
export function callRowsOf(events: readonly SessionEvent[], turnId: string): CallRow[] {
  const rows = new Map<string, CallRow>();
  const row = (callId: string, toolName?: string): CallRow => {
    let found = rows.get(callId);
    if (found === undefined) {
      found = { callId, toolName: toolName ?? '', status: 'scheduled' };
      rows.set(callId, found);
    }
    if (toolName !== undefined && found.toolName === '') found.toolName = toolName;
    return found;
  };
  for (const event of events) {
    if (event.turnId !== turnId) continue;
    switch (event.type) {
      case 'ToolCallScheduled':
        row(event.callId, event.toolName);
        break;
      case 'ToolCallStarted':
        row(event.callId, event.toolName).status = 'executing';
        break;
      case 'PermissionRequested':
        row(event.callId, event.toolName).status = 'awaiting_approval';
        break;
      case 'ToolCallProgress': {
        const call = row(event.callId, event.toolName);
        call.progress = {
          ...(event.output === undefined ? {} : { output: event.output }),
          ...(event.message === undefined ? {} : { message: event.message }),
          elapsedMs: event.elapsedMs,
          count: (call.progress?.count ?? 0) + 1,
        };
        break;
      }
      case 'ToolCallResult': {
        const call = row(event.callId, event.toolName);
        call.status = event.status;
        call.totalMs = event.totalMs;
        if (event.queuedMs !== undefined) call.queuedMs = event.queuedMs;
        if (event.display !== undefined) call.display = event.display;
        if (event.preview !== undefined) call.preview = event.preview;
        if (event.previewTruncated === true) call.previewTruncated = true;
        break;
      }
      case 'ToolCallError': {
        const call = row(event.callId, event.toolName);
        call.status = event.status;
        call.message = event.message;
        if (event.errorCode !== undefined) call.errorCode = event.errorCode;
        break;
      }
      // What the rows do not draw (the timeline and the other sections do).
      case 'TurnStarted':
      case 'PermissionResolved':
      case 'PermissionDenied':
      case 'PolicyChanged':
      case 'PolicyShadowDecision':
      case 'ToolCallResultReplaced':
      case 'ToolBatchComplete':
      case 'TurnCompleted':
      case 'WorkspaceSettingsUntrusted':
      case 'BackgroundTaskStarted':
      case 'BackgroundTaskEnded':
      case 'ClientToolRequested':
      case 'ApprovalIgnored':
      case 'CallInDoubt':
      case 'CallInDoubtResolved':
        break;
      default: {
        const unknown: { type?: unknown } = event;
        void unknown;
        break;
      }
    }
  }
  return [...rows.values()];
}

/** One display, drawn by kind. */
export function displayBlock(display: ToolDisplay): SafeHtml {
  switch (display.type) {
    case 'text':
      return html`<pre class="output">${display.text}</pre>`;
    case 'bash_output':
      return html`<div class="display display-bash"><p class="muted">exit code <code>${display.exitCode ?? 'none'}</code>${display.truncated ? ' · cut' : ''}</p>${display.stdout === '' ? '' : html`<pre class="output">${display.stdout}</pre>`}${display.stderr === '' ? '' : html`<pre class="output stderr">${display.stderr}</pre>`}</div>`;
    case 'file_diff':
      return html`<div class="display display-diff"><p><code>${display.filePath}</code>${display.truncated ? ' · cut' : ''}</p><pre class="output">${display.hunks.map((hunk) => `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@\n${hunk.lines.join('\n')}\n`)}</pre></div>`;
    case 'mcp_tool':
      return html`<div class="display display-mcp"><p>MCP server <b class="mcp-server">${display.server}</b> › tool <b class="mcp-tool">${display.tool}</b>${display.isError ? html` <span class="badge status-error">error</span>` : ''}</p><p class="muted">content: ${display.contentKinds.length === 0 ? 'none' : display.contentKinds.map((kind) => html`<span class="chip">${kind}</span> `)}</p></div>`;
    case 'background_task':
      return html`<div class="display display-background"><p>Background task <code class="task-id">${display.taskId}</code> · <b class="task-phase">${display.phase}</b>${display.status === undefined ? '' : html` · ${display.status}`}${display.exitCode === undefined || display.exitCode === null ? '' : html` · exit code <code>${display.exitCode}</code>`}</p>${display.command === undefined ? '' : html`<p class="muted"><code>${display.command}</code></p>`}${display.tail === undefined || display.tail === '' ? '' : html`<pre class="output task-tail">${display.tail}</pre>`}</div>`;
    case 'image':
      return html`<div class="display display-image"><p>Image <code>${display.mediaType}</code> · ${display.bytes} bytes${display.filePath === undefined ? '' : html` · <code>${display.filePath}</code>`}</p>${display.artifact === '' ? '' : html`<img class="result-image" alt="${display.filePath ?? 'image'}" src="${`/artifact/image?uri=${encodeURIComponent(display.artifact)}`}"><p class="muted"><code>${display.artifact}</code></p>`}</div>`;
    case 'web_fetch':
      return html`<div class="display display-fetch"><p>Fetched <b>${display.host}</b> · status <code>${display.status}</code> · ${display.bytes} bytes${display.contentType === undefined ? '' : html` · <code>${display.contentType}</code>`}</p><p class="muted"><code>${display.url}</code></p></div>`;
    case 'search':
      return html`<div class="display display-search"><p>${display.tool} <code>${display.pattern}</code> · ${display.files} file(s)${display.matches === undefined ? '' : html` · ${display.matches} match(es)`}</p>${display.firstMatches.length === 0 ? '' : html`<pre class="output">${display.firstMatches.join('\n')}${display.truncated ? '\n…' : ''}</pre>`}</div>`;
    default: {
      const unknown: { type?: unknown } = display;
      return html`<p class="muted">(display <code>${String(unknown.type)}</code>)</p>`;
    }
  }
}

/** The turn's calls as the event stream tells them. */
export function callRowsBlock(rows: readonly CallRow[]): SafeHtml {
  if (rows.length === 0) return html`<h2>Calls</h2><p class="empty">No call yet.</p>`;
  return html`<h2>Calls</h2>${rows.map(
    (row) =>
      html`<div class="call-row" data-call="${row.callId}" data-display="${row.display?.type ?? ''}"><p><span class="badge status-${row.status}">${row.status}</span> <b>${row.toolName}</b> · call <code>${row.callId}</code>${row.totalMs === undefined ? '' : html` · ${row.totalMs} ms`}${row.queuedMs === undefined || row.queuedMs === 0 ? '' : html` · queued ${row.queuedMs} ms`}${row.errorCode === undefined ? '' : html` · <code>${row.errorCode}</code>`}</p>
${row.progress === undefined || row.display !== undefined || row.preview !== undefined ? '' : html`<div class="progress"><p class="muted">running for ${Math.round(row.progress.elapsedMs / 1000)} s${row.progress.message === undefined ? '' : html` · ${row.progress.message}`}</p>${row.progress.output === undefined ? '' : html`<pre class="output live-output">${row.progress.output}</pre>`}</div>`}
${row.display === undefined ? '' : displayBlock(row.display)}
${row.display === undefined && row.preview !== undefined && row.preview !== '' ? html`<pre class="output preview">${row.preview}${row.previewTruncated === true ? '\n…' : ''}</pre>` : ''}
${row.message === undefined ? '' : html`<pre class="output">${row.message}</pre>`}</div>`,
  )}`;
}
