/**
 * What of a result a `ToolCallResult` event carries for a UI (v1.3): the display, bounded to a couple of kilobytes
 * (the result itself keeps the full display), and a preview of the model text. Pure: the workflow builds it.
 */
import { EVENT_LIMITS } from './defaults.js';
import type { ToolDisplay } from './tool-result.js';

/** Characters of each of a `bash_output` display's streams an event keeps (the tail: where a failure shows). */
const EVENT_STREAM_CHARS = 1_000;
/** Lines of a `file_diff` display an event keeps, in all, and characters of each. */
const EVENT_DIFF_LINES = 40;
const EVENT_DIFF_LINE_CHARS = 200;

function tail(text: string, chars: number): string {
  return text.length > chars ? text.slice(text.length - chars) : text;
}

/** A result's display as an event carries it: the small kinds whole, output and diffs cut (`truncated` says so). */
export function eventDisplay(display: ToolDisplay): ToolDisplay {
  switch (display.type) {
    case 'text':
      return display.text.length > EVENT_LIMITS.resultPreviewChars
        ? { type: 'text', text: display.text.slice(0, EVENT_LIMITS.resultPreviewChars) }
        : display;
    case 'bash_output': {
      const stdout = tail(display.stdout, EVENT_STREAM_CHARS);
      const stderr = tail(display.stderr, EVENT_STREAM_CHARS);
      return {
        ...display,
        stdout,
        stderr,
        truncated: display.truncated || stdout !== display.stdout || stderr !== display.stderr,
      };
    }
    case 'file_diff': {
      let budget = EVENT_DIFF_LINES;
      let cut = false;
      const hunks = [];
      for (const hunk of display.hunks) {
        if (budget <= 0) {
          cut = true;
          break;
        }
        const lines = hunk.lines.slice(0, budget).map((line) => {
          if (line.length <= EVENT_DIFF_LINE_CHARS) return line;
          cut = true;
          return line.slice(0, EVENT_DIFF_LINE_CHARS);
        });
        if (lines.length < hunk.lines.length) cut = true;
        budget -= lines.length;
        hunks.push({ ...hunk, lines });
      }
      return { ...display, hunks, truncated: display.truncated || cut };
    }
    case 'mcp_tool':
    case 'background_task':
    case 'image':
    case 'web_fetch':
    case 'search':
      // Small by construction (src/tools/support/displays.ts bounds them in the activity).
      return display;
    default: {
      const exhaustive: never = display;
      return exhaustive;
    }
  }
}

/** The start of a result's model text for its event, and whether it was cut. */
export function resultPreview(modelContent: string): { preview: string; previewTruncated: boolean } {
  const limit = EVENT_LIMITS.resultPreviewChars;
  if (modelContent.length <= limit) return { preview: modelContent, previewTruncated: false };
  // Never split a surrogate pair: a lone half is not valid UTF-8 on the wire.
  let end = limit;
  const code = modelContent.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { preview: modelContent.slice(0, end), previewTruncated: true };
}
