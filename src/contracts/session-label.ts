import { SESSION_LABEL_MAX_CHARS } from './defaults.js';

/**
 * A session's label (`SessionOptions.label`, v1.3) as one line of plain text within its limit: wherever it is shown
 * (the Web UI's details, `switchyard sessions`, the console), even when the client that set it did not validate it.
 * Pure: safe to import from workflow code.
 */
export function sessionLabelText(label: string): string {
  const line = label.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > SESSION_LABEL_MAX_CHARS ? `${line.slice(0, SESSION_LABEL_MAX_CHARS - 1)}…` : line;
}
