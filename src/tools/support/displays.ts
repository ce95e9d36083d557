/**
 * The v1.3 display kinds a UI draws from (`ToolDisplay`): builders for the built-in tools and the bound every display
 * of these kinds passes before it enters a result (and so history). Each kind is small by construction: names and
 * counts, the first few matches, a tail of output — never the output itself, which the model content carries.
 */
import { DISPLAY_LIMITS } from '../../contracts/defaults.js';
import type {
  BackgroundTaskDisplay,
  ImageDisplay,
  ImageMediaType,
  McpToolDisplay,
  SearchDisplay,
  WebFetchDisplay,
} from '../../contracts/tool-result.js';

type V13Display = McpToolDisplay | BackgroundTaskDisplay | SearchDisplay | WebFetchDisplay | ImageDisplay;

/** Most content kinds an `mcp_tool` display lists. */
const MAX_CONTENT_KINDS = 20;

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/** The last `chars` characters of `text`, marked as cut when shorter. */
function tail(text: string, chars: number): string {
  return text.length > chars ? `…${text.slice(text.length - chars + 1)}` : text;
}

/** A display of a v1.3 kind, with every free-text field within DISPLAY_LIMITS (a custom tool may build its own). */
export function boundedDisplay<D extends V13Display>(display: D): D {
  const name = DISPLAY_LIMITS.displayNameChars;
  switch (display.type) {
    case 'mcp_tool':
      return {
        ...display,
        server: clip(display.server, name),
        tool: clip(display.tool, name),
        contentKinds: display.contentKinds.slice(0, MAX_CONTENT_KINDS).map((kind) => clip(kind, 40)),
      };
    case 'background_task': {
      const bounded: BackgroundTaskDisplay = { ...display, taskId: clip(display.taskId, name) };
      if (display.command !== undefined) bounded.command = clip(display.command, name);
      if (display.status !== undefined) bounded.status = clip(display.status, 40);
      if (display.tail !== undefined) bounded.tail = tail(display.tail, DISPLAY_LIMITS.backgroundTailChars);
      return bounded as D;
    }
    case 'image': {
      const bounded: ImageDisplay = { ...display, artifact: clip(display.artifact, 2 * name) };
      if (display.filePath !== undefined) bounded.filePath = clip(display.filePath, name);
      return bounded as D;
    }
    case 'web_fetch': {
      const bounded: WebFetchDisplay = { ...display, url: clip(display.url, name), host: clip(display.host, name) };
      if (display.contentType !== undefined) bounded.contentType = clip(display.contentType, 100);
      return bounded as D;
    }
    case 'search': {
      const firstMatches = display.firstMatches
        .slice(0, DISPLAY_LIMITS.searchFirstMatches)
        .map((match) => clip(match, DISPLAY_LIMITS.searchMatchChars));
      return {
        ...display,
        pattern: clip(display.pattern, name),
        firstMatches,
        truncated: display.truncated || firstMatches.length < display.firstMatches.length,
      };
    }
    default: {
      const exhaustive: never = display;
      return exhaustive;
    }
  }
}

/** An `mcp_tool` display: the server, the tool and the kinds of the content blocks it answered with. */
export function mcpToolDisplay(options: {
  server: string;
  tool: string;
  content: ReadonlyArray<{ type?: unknown }>;
  isError: boolean;
}): McpToolDisplay {
  return boundedDisplay({
    type: 'mcp_tool',
    server: options.server,
    tool: options.tool,
    contentKinds: options.content.map((block) => (typeof block.type === 'string' ? block.type : 'unknown')),
    isError: options.isError,
  });
}

/** A `background_task` display for a task's start, a look at its output, or its end. */
export function backgroundTaskDisplay(fields: Omit<BackgroundTaskDisplay, 'type'>): BackgroundTaskDisplay {
  return boundedDisplay({ type: 'background_task', ...fields });
}

/** An `image` display of a stored image. */
export function imageDisplay(fields: {
  mediaType: ImageMediaType;
  bytes: number;
  artifact: string;
  filePath?: string;
}): ImageDisplay {
  return boundedDisplay({ type: 'image', ...fields });
}

/** A `web_fetch` display: host, status and the body's bytes. */
export function webFetchDisplay(fields: Omit<WebFetchDisplay, 'type' | 'host'>): WebFetchDisplay {
  let host = '';
  try {
    host = new URL(fields.url).host;
  } catch {
    host = '';
  }
  return boundedDisplay({ type: 'web_fetch', host, ...fields });
}

/** A `search` display of a Glob or Grep: the first results of `results`, and whether more were left out. */
export function searchDisplay(fields: {
  tool: 'Glob' | 'Grep';
  pattern: string;
  files: number;
  matches?: number;
  results: readonly string[];
  truncated?: boolean;
}): SearchDisplay {
  const display: SearchDisplay = {
    type: 'search',
    tool: fields.tool,
    pattern: fields.pattern,
    files: fields.files,
    firstMatches: fields.results.slice(0, DISPLAY_LIMITS.searchFirstMatches),
    truncated: fields.truncated === true || fields.results.length > DISPLAY_LIMITS.searchFirstMatches,
  };
  if (fields.matches !== undefined) display.matches = fields.matches;
  return boundedDisplay(display);
}

/** A result line (a path, or `path:line: text`) with the session's cwd taken off its front, for a shorter display. */
export function relativeToCwd(cwd: string, line: string): string {
  const prefix = cwd.endsWith('/') ? cwd : `${cwd}/`;
  return line.startsWith(prefix) ? line.slice(prefix.length) : line;
}
