import { approvalSignal, pendingApprovalsSearchAttribute } from '../contracts/messages.js';
import type { SessionOptions } from '../contracts/session.js';
import { sessionLabelText } from '../contracts/session-label.js';

/** The memo field that holds a session's label (v1.3). */
export const SESSION_LABEL_MEMO = 'switchyardLabel';

/** A listed session's label, one line within its limit; none when the memo has no string label. */
export function sessionLabelOf(memo: Record<string, unknown> | undefined): { label?: string } {
  const label = memo?.[SESSION_LABEL_MEMO];
  return typeof label === 'string' && label.trim() !== '' ? { label: sessionLabelText(label) } : {};
}

/** Rules listed per kind in the static details; more are counted. */
const LISTED_RULES = 10;

/** Characters of one value (a cwd, a rule) shown. */
const VALUE_CHARS = 200;

/** A code span, clipped; a backtick inside would end it early. */
function code(text: string): string {
  const clipped = text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
  return `\`${clipped.replace(/`/g, "'")}\``;
}

/**
 * What the Temporal Web UI shows at the top of a session's page, fixed at start (the workflow start options
 * `staticSummary` and `staticDetails`): the session id, its cwd and permission mode, its rules, and how to approve
 * from that page. Any client starting a `toolSession` can set the same (docs/CONCEPTS.md, "Temporal Web UI").
 */
export function sessionStartMetadata(
  sessionId: string,
  options: SessionOptions,
  taskQueue: string,
): { staticSummary: string; staticDetails: string; memo?: Record<string, unknown> } {
  const id = options.sessionId ?? sessionId;
  const cwd = options.cwd ?? "the worker's directory";
  const mode = options.permissionMode ?? 'default';
  // v1.3: a label leads the summary (the Web UI's list shows the summary's start).
  const staticSummary = `${options.label === undefined ? '' : `${options.label} · `}Switchyard session ${id} · cwd ${cwd} · mode ${mode}`;
  const details = [
    `**Switchyard tool session** ${code(id)} on task queue ${code(taskQueue)}`,
    '',
    `To approve a call from here: copy its request's JSON from Current Details, then More Actions → Send a Signal, name ${code(approvalSignal.name)}, input: that JSON (\`"decision"\`: \`allow\`, \`allow_always\` or \`deny\`). Sessions waiting for a human: filter ${code(`${pendingApprovalsSearchAttribute} > 0`)}.`,
    '',
    ...(options.label === undefined ? [] : [`- label: ${code(options.label)}`]),
    `- cwd: ${code(cwd)}`,
    `- permission mode: ${code(mode)}`,
  ];
  for (const kind of ['allow', 'ask', 'deny'] as const) {
    const rules = options.rules?.[kind] ?? [];
    if (rules.length === 0) continue;
    const listed = rules.slice(0, LISTED_RULES).map(code).join(', ');
    details.push(
      `- ${kind} rules: ${listed}${rules.length > LISTED_RULES ? ` and ${rules.length - LISTED_RULES} more` : ''}`,
    );
  }
  if (options.approvalTimeoutMs !== undefined)
    details.push(`- unanswered approvals are denied after ${options.approvalTimeoutMs} ms`);
  // Last, a line of lesser value: the Web UI sizes the frame it renders the markdown in a line short.
  details.push('', '_Set by the client that started the session._');
  return {
    staticSummary: staticSummary.replace(/\s+/g, ' '),
    staticDetails: details.join('\n'),
    // v1.3: the label in the memo too, which visibility's list returns (`switchyard sessions` shows it).
    ...(options.label === undefined ? {} : { memo: { [SESSION_LABEL_MEMO]: options.label } }),
  };
}
